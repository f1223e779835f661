/**
 * Manual check, not part of the suite (tap runs *.test.ts only): the API reference page (/platform/api/) as a new
 * integrator uses it, in headless Chromium (Debian's `chromium`) driven through the DevTools protocol. It checks that
 * the examples carry real values, that the version menu switches to version 1 and back, and that "Test Request" fetches
 * a token through the page (the document's oauth2 client-credentials flow: client id and secret typed into the page)
 * and answers 200. Screenshots of each step go to OUT_DIR (default /tmp/refdoc-shots).
 * Run: node --experimental-websocket --import tsx test/docs/reference-page.manual.ts [OUT_DIR]
 */
import { mkdirSync } from 'node:fs';
import { t } from 'tap';
import { openHeadlessChromium } from '../helpers/chromium.js';
import { testDatabase } from '../helpers/database.js';
import { fixtureText, importText } from '../helpers/era-files.js';
import { createTestIntegration } from '../helpers/identity.js';
import { listeningApp } from '../mcp/mcp-helpers.js';
import { contractVersions } from '../../src/generated/contract.js';

/** The version menu's labels, as the page names each version from the contract. */
const manifest = (version: string) => contractVersions.find((v) => v.version === version)!.manifest_version;
const CURRENT_LABEL = `Version 2 (${manifest('2')}, current)`;
const V1_LABEL = `Version 1 (${manifest('1')}, deprecated)`;

t.setTimeout(600_000);
const out = process.argv[2] ?? '/tmp/refdoc-shots';
mkdirSync(out, { recursive: true });
const db = (await testDatabase()).db;
const { base } = await listeningApp(t);
const integration = await createTestIntegration(db, { name: 'Revenue dashboard' });
await importText(db, integration.agencyId, 'medicare-home-health-crlf.835', fixtureText('medicare-home-health-crlf.835'));

const page = await openHeadlessChromium(t);
await page.send('Emulation.setDeviceMetricsOverride', { width: 1400, height: 1000, deviceScaleFactor: 1, mobile: false });
const exchanges: { url: string; method: string; status: number }[] = [];
const methods = new Map<string, string>();
await page.send('Network.enable');
page.on('Network.requestWillBeSent', ({ requestId, request }) => methods.set(requestId, request.method));
page.on('Network.responseReceived', ({ requestId, response }) => exchanges.push({ url: response.url, method: methods.get(requestId) ?? '?', status: response.status }));

const pause = (ms = 800) => new Promise((r) => setTimeout(r, ms));
const shot = (name: string) => page.screenshot(`${out}/${name}.png`);
const text = () => page.evaluate<string>('document.body.innerText');
/** Clicks the first visible element of `selector` whose text includes `label`. */
async function click(selector: string, label: string, within = 'document') {
  const found = await page.evaluate<boolean>(`(() => {
    const e = [...${within}.querySelectorAll(${JSON.stringify(selector)})].find((e) => e.textContent.includes(${JSON.stringify(label)}) && e.getBoundingClientRect().height > 0);
    if (!e) return false;
    e.scrollIntoView({ block: 'center' });
    e.click();
    return true;
  })()`);
  if (!found) throw new Error(`no ${selector} with "${label}" on the page`);
  await pause();
}
/** Types into the API client's field labelled `label`, as a person would (keystrokes into the focused editor). */
async function type(label: string, value: string) {
  const focused = await page.evaluate<boolean>(`(() => {
    const dialog = document.querySelector('[role=dialog]');
    const labelled = [...dialog.querySelectorAll('label')].find((l) => l.textContent.trim() === ${JSON.stringify(label)});
    const field = labelled && document.getElementById(labelled.htmlFor);
    const editor = field && (field.matches('input') ? field : field.querySelector('[contenteditable=true]'));
    if (!editor) return false;
    editor.focus();
    return true;
  })()`);
  if (!focused) throw new Error(`no field "${label}" in the API client`);
  await page.send('Input.insertText', { text: value });
  await pause(300);
}
const operationUrl = (version: string, anchor: string) => `${base}/platform/api/#v${version}/tag/${anchor}`;

await t.test('the reference page opens on the current version with the oauth2 flow', async (t) => {
  await page.navigate(`${base}/platform/api/`);
  t.ok(await page.waitFor(`document.body.innerText.includes('Remittances')`, 30_000), 'the page rendered');
  await pause(1500);
  await shot('01-overview');
  const shown = await text();
  t.ok(shown.includes(CURRENT_LABEL), 'the version menu names the current version');
  t.ok(shown.includes('Selected Auth Type: oauth2'), 'the authentication panel offers the client-credentials flow');
  t.ok(shown.includes(`${base}/api/v1/oauth/token`), 'with the absolute token URL of this deployment');
});

await t.test('examples show real values', async (t) => {
  await page.navigate(operationUrl('2', 'remittances/GET/api/v1/ext/remittances'));
  t.ok(await page.waitFor(`document.body.innerText.includes('rem_hUog5RHn9xreHrsp')`, 20_000), 'the ERA payment list example names a rem_ id');
  await click('h1, h2, h3', 'List ERA payments');
  await shot('02-remittances-example');
  const remittances = await text();
  for (const value of ['MEDICARE HOME HEALTH MAC', '"11377.30"', '****0003']) t.ok(remittances.includes(value), value);

  await page.navigate(operationUrl('2', 'governed-queries/POST/api/v1/ext/queries/{queryId}/run'));
  t.ok(await page.waitFor(`document.body.innerText.includes('remittance_variance_by_payer')`, 20_000), 'the run example names a governed query');
  await click('h1, h2, h3', 'Run an approved governed query');
  await shot('03-run-query-example');
  const run = await text();
  t.ok(run.includes(`curl ${base}/api/v1/ext/queries/remittance_variance_by_payer/run`), 'the request sample calls this deployment with the example query id');
  t.ok(run.includes('"from": "2026-01-01"') && run.includes('"natural_language_input"'), 'the request sample carries the example body');
  // The example panel's status tab (visible, in the right-hand column).
  const tab404 = `[...document.querySelectorAll('button[role=tab]')].find((e) => e.textContent.trim() === 'Status: 404' && e.getBoundingClientRect().top > 0 && e.getBoundingClientRect().bottom < innerHeight)`;
  t.ok(await page.evaluate<boolean>(`Boolean(${tab404})`), 'the example panel has a 404 tab');
  await page.evaluate(`(() => { const tab = ${tab404}; tab.click(); tab.scrollIntoView({ block: 'start' }); })()`);
  await pause();
  t.ok(await page.waitFor(`[...document.querySelectorAll('pre, code')].some((e) => e.textContent.includes('"PLATFORM_QUERY_NOT_FOUND"') && e.getBoundingClientRect().left > 700)`, 5_000), "the 404 tab shows the operation's own error example");
  await shot('03b-run-query-404-example');
});

await t.test('the version menu switches to version 1 and back', async (t) => {
  await page.navigate(`${base}/platform/api/`);
  await page.waitFor(`document.body.innerText.includes('Remittances')`, 20_000);
  await click('button', CURRENT_LABEL);
  await shot('04-version-menu');
  await click('[role=option], li, button', V1_LABEL);
  t.ok(await page.waitFor(`document.body.innerText.includes('Contract version 1 is deprecated')`, 20_000), 'version 1 is shown with its deprecation');
  await pause(1500);
  await shot('05-version-1');
  t.match(await page.evaluate<string>('location.hash'), /^#v1/, 'the address names version 1');
  await page.navigate(operationUrl('1', 'patients/GET/api/v1/ext/patients'));
  t.ok(await page.waitFor(`document.body.innerText.includes('"full_name"')`, 20_000), 'version 1 examples use version 1 names (full_name)');
  await click('button', V1_LABEL);
  await click('[role=option], li, button', CURRENT_LABEL);
  t.ok(await page.waitFor(`document.body.innerText.includes(${JSON.stringify(CURRENT_LABEL)}) && !document.body.innerText.includes('Contract version 1 is deprecated')`, 20_000), 'back on version 2');
});

await t.test('Test Request fetches a token through the page and answers 200', async (t) => {
  await page.navigate(operationUrl('2', 'remittances/GET/api/v1/ext/remittances'));
  await page.waitFor(`document.body.innerText.includes('rem_hUog5RHn9xreHrsp')`, 20_000);
  await click('button', 'Test Request', `[...document.querySelectorAll('h1, h2, h3')].find((h) => h.textContent.trim() === 'List ERA payments').closest('section')`);
  t.ok(await page.waitFor(`document.querySelector('[role=dialog]')?.innerText.includes('Client Secret')`, 10_000), 'the API client opened on the oauth2 flow');
  await type('Client ID', integration.clientId);
  await type('Client Secret', integration.clientSecret);
  await shot('06-test-request-credentials');
  await click('button', 'Authorize', `document.querySelector('[role=dialog]')`);
  const tokenFetched = await page.waitFor(`!document.querySelector('[role=dialog]').innerText.includes('Authorize')`, 10_000);
  await shot('07-test-request-authorized');
  const tokenCall = exchanges.find((e) => e.url === `${base}/api/v1/oauth/token` && e.method === 'POST');
  t.equal(tokenCall?.status, 200, 'the page fetched a token from the token endpoint');
  t.ok(tokenFetched, 'the auth panel shows the token instead of Authorize');
  await click('button', 'Send', `document.querySelector('[role=dialog]')`);
  const answered = await page.waitFor(`/\\b200\\b/.test(document.querySelector('[role=dialog]').innerText) && document.querySelector('[role=dialog]').innerText.includes('rem_')`, 15_000);
  await shot('08-test-request-response');
  const call = exchanges.find((e) => e.url.startsWith(`${base}/api/v1/ext/remittances`) && e.method === 'GET');
  t.equal(call?.status, 200, `the call answered 200 (${call?.url})`);
  t.ok(answered, 'the response panel shows 200 and the payments');
});

t.comment(`exchanges: ${JSON.stringify(exchanges.filter((e) => e.url.includes('/api/v1/')))}`);
