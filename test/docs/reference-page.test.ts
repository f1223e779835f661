/**
 * The API reference page (/platform/api/) as a new integrator uses it, in headless Chromium (Debian's `chromium`)
 * driven through the DevTools protocol: one browser, the page opened under both names of the loopback address while
 * the deployment's public base URL (TOKEN_ISSUER) names only `localhost`, as `npm start` does. From each, Test Request
 * fetches a token through the page (the oauth2 client-credentials flow: client id and secret typed into the page) and
 * an operation answers 200, every call same-origin. Also: examples carry real values, and the version menu keeps the
 * reader on the operation being read. Skipped without /usr/bin/chromium; .ci/run installs it.
 * REFERENCE_PAGE_SHOTS=/tmp/refdoc-shots writes a screenshot of each step there.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { t } from 'tap';
import { CHROMIUM, openHeadlessChromium, type HeadlessPage } from '../helpers/chromium.js';
import { buildTestApp } from '../helpers/app.js';
import { testDatabase } from '../helpers/database.js';
import { fixtureText, importText } from '../helpers/era-files.js';
import { createTestIntegration } from '../helpers/identity.js';
import { freePort } from '../helpers/ports.js';
import { contractVersions } from '../../src/generated/contract.js';

/** The version menu's labels, as the page names each version from the contract. */
const manifest = (version: string) => contractVersions.find((v) => v.version === version)!.manifest_version;
const CURRENT_LABEL = `Version 2 (${manifest('2')}, current)`;
const V1_LABEL = `Version 1 (${manifest('1')}, deprecated)`;

if (!existsSync(CHROMIUM))
  t.plan(0, `no ${CHROMIUM} (Debian package chromium): the reference page is not driven in a browser`);
else await driveThePage();

async function driveThePage() {
  t.setTimeout(240_000);
  const shots = process.env.REFERENCE_PAGE_SHOTS;
  if (shots) mkdirSync(shots, { recursive: true });
  const db = (await testDatabase()).db;
  const port = await freePort();
  // As `npm start` runs: the public base URL says localhost, the server listens on 127.0.0.1 and prints that.
  const issuer = `http://localhost:${port}`;
  const api = await buildTestApp({ tokenIssuer: issuer, tokenAudience: `${issuer}/api/v1/ext` }, t);
  await api.app.listen({ port, host: '127.0.0.1' });
  const integration = await createTestIntegration(db, { name: 'Revenue dashboard' });
  await importText(
    db,
    integration.agencyId,
    'medicare-home-health-crlf.835',
    fixtureText('medicare-home-health-crlf.835'),
  );

  const page = await openHeadlessChromium(t, { width: 1400, height: 1000 });
  const exchanges = recordExchanges(page);
  await exchanges.enable();
  const ui = pageActions(page, shots);

  for (const host of ['127.0.0.1', 'localhost']) {
    const base = `http://${host}:${port}`;
    await t.test(`opened at ${base}, Test Request fetches a token through the page and answers 200`, async (t) => {
      exchanges.clear();
      await page.navigate(`${base}/platform/api/#v2/tag/remittances/GET/api/v1/ext/remittances`);
      t.ok(
        await page.waitFor(`document.body.innerText.includes('rem_hUog5RHn9xreHrsp')`, 30_000),
        'the page rendered the operation',
      );
      const shown = await ui.text();
      t.ok(shown.includes(CURRENT_LABEL), 'the version menu names the current version');
      t.ok(shown.includes('Selected Auth Type: oauth2'), 'the authentication panel offers the client-credentials flow');
      t.ok(
        shown.includes(`curl '${base}/api/v1/ext/remittances`),
        'request samples call the address the page was opened at',
      );
      await ui.click(
        'button',
        'Test Request',
        `[...document.querySelectorAll('h1, h2, h3')].find((h) => h.textContent.trim() === 'List ERA payments').closest('section')`,
      );
      t.ok(
        await page.waitFor(`document.querySelector('[role=dialog]')?.innerText.includes('Client Secret')`),
        'the API client opened on the oauth2 flow',
      );
      await ui.type('Client ID', integration.clientId);
      await ui.type('Client Secret', integration.clientSecret);
      await ui.shot(`${host}-1-credentials`);
      await ui.click('button', 'Authorize', `document.querySelector('[role=dialog]')`);
      t.equal(
        (await exchanges.answer('POST', `${base}/api/v1/oauth/token`))?.status,
        200,
        'the page fetched a token from the token endpoint at its own origin',
      );
      t.ok(
        await page.waitFor(`document.querySelector('[role=dialog]').innerText.includes('Access Token')`),
        'the auth panel shows the token',
      );
      await ui.shot(`${host}-2-authorized`);
      await ui.click('button', 'Send', `document.querySelector('[role=dialog]')`);
      const answered = await page.waitFor(
        `/\\b200\\b/.test(document.querySelector('[role=dialog]').innerText) && document.querySelector('[role=dialog]').innerText.includes('rem_')`,
        15_000,
      );
      await ui.shot(`${host}-3-response`);
      t.equal((await exchanges.answer('GET', `${base}/api/v1/ext/remittances`))?.status, 200, 'the call answered 200');
      t.ok(answered, 'the response panel shows 200 and the payments');
      t.same(
        exchanges.all().filter((e) => !e.url.startsWith(`${base}/`)),
        [],
        'every request went to the origin the page came from',
      );
      t.same(
        exchanges.all().filter((e) => e.method === 'OPTIONS'),
        [],
        'same-origin: no preflight',
      );
      t.same(
        exchanges.all().filter((e) => e.status >= 400),
        [],
        'nothing answered an error (the favicon included)',
      );
    });
  }

  await t.test('the favicon decodes as a 16x16 image', async (t) => {
    await page.navigate(`http://127.0.0.1:${port}/favicon.ico`);
    t.ok(await page.waitFor(`document.querySelector('img')?.naturalWidth === 16`), 'Chromium draws it');
  });

  await t.test('examples show real values', async (t) => {
    const base = `http://127.0.0.1:${port}`;
    await page.navigate(`${base}/platform/api/#v2/tag/remittances/GET/api/v1/ext/remittances`);
    await ui.click('h1, h2, h3', 'List ERA payments');
    const remittances = await ui.text();
    for (const value of ['MEDICARE HOME HEALTH MAC', '"11377.30"', '****0003'])
      t.ok(remittances.includes(value), value);

    await page.navigate(`${base}/platform/api/#v2/tag/governed-queries/POST/api/v1/ext/queries/{queryId}/run`);
    t.ok(
      await page.waitFor(`document.body.innerText.includes('remittance_variance_by_payer')`, 20_000),
      'the run example names a governed query',
    );
    await ui.click('h1, h2, h3', 'Run an approved governed query');
    await ui.shot('examples-run-query');
    const run = await ui.text();
    t.ok(
      run.includes(`curl ${base}/api/v1/ext/queries/remittance_variance_by_payer/run`),
      'the request sample calls this deployment with the example query id',
    );
    t.ok(
      run.includes('"from": "2026-01-01"') && run.includes('"natural_language_input"'),
      'the request sample carries the example body',
    );
    // The example panel's status tab (visible, in the right-hand column).
    const tab404 = `[...document.querySelectorAll('button[role=tab]')].find((e) => e.textContent.trim() === 'Status: 404' && e.getBoundingClientRect().top > 0 && e.getBoundingClientRect().bottom < innerHeight)`;
    t.ok(await page.waitFor(`Boolean(${tab404})`), 'the example panel has a 404 tab');
    await page.evaluate(`(() => { const tab = ${tab404}; tab.click(); tab.scrollIntoView({ block: 'start' }); })()`);
    t.ok(
      await page.waitFor(
        `[...document.querySelectorAll('pre, code')].some((e) => e.textContent.includes('"PLATFORM_QUERY_NOT_FOUND"') && e.getBoundingClientRect().left > 700)`,
      ),
      "the 404 tab shows the operation's own error example",
    );
  });

  await t.test('the version menu switches versions and keeps the operation being read', async (t) => {
    const patients = 'tag/patients/GET/api/v1/ext/patients';
    await page.navigate(`http://127.0.0.1:${port}/platform/api/#v2/${patients}`);
    t.ok(
      await page.waitFor(`document.body.innerText.includes('"display_name"')`, 30_000),
      'version 2 examples use version 2 names (display_name)',
    );
    await ui.click('button', CURRENT_LABEL);
    await ui.shot('version-menu');
    await ui.click('[role=option], li, button', V1_LABEL);
    t.ok(
      await page.waitFor(`document.body.innerText.includes('Contract version 1 is deprecated')`, 20_000),
      'version 1 is shown with its deprecation',
    );
    t.ok(
      await page.waitFor(`location.hash === ${JSON.stringify(`#v1/${patients}`)}`),
      'the address names the same operation in version 1',
    );
    t.ok(
      await page.waitFor(`document.body.innerText.includes('"full_name"')`),
      'version 1 examples use version 1 names (full_name)',
    );
    t.ok(
      await page.waitFor(
        `[...document.querySelectorAll('h1, h2, h3')].some((h) => h.textContent.trim() === 'List patients' && h.getBoundingClientRect().top >= 0 && h.getBoundingClientRect().top < innerHeight / 2)`,
      ),
      'the operation is in view',
    );
    await ui.shot('version-1-patients');
    await ui.click('button', V1_LABEL);
    await ui.click('[role=option], li, button', CURRENT_LABEL);
    t.ok(await page.waitFor(`location.hash === ${JSON.stringify(`#v2/${patients}`)}`, 20_000), 'and back in version 2');
    t.ok(
      await page.waitFor(`!document.body.innerText.includes('Contract version 1 is deprecated')`),
      'version 2 is shown',
    );

    await page.navigate(`http://127.0.0.1:${port}/platform/api/#v2/model/contractversion`);
    await ui.click('button', CURRENT_LABEL);
    await ui.click('[role=option], li, button', V1_LABEL);
    t.ok(
      await page.waitFor(`document.body.innerText.includes('Contract version 1 is deprecated')`, 20_000),
      'version 1 is shown',
    );
    t.notMatch(
      await page.evaluate<string>('location.hash'),
      /contractversion/,
      'a model version 1 lacks is not named in its address',
    );
  });
}

interface Exchange {
  method: string;
  url: string;
  status: number;
}

/** The page's requests with their answers, from the Network domain. */
function recordExchanges(page: HeadlessPage) {
  const methods = new Map<string, string>();
  let exchanges: Exchange[] = [];
  page.on('Network.requestWillBeSent', ({ requestId, request }) => methods.set(requestId, request.method));
  page.on('Network.responseReceived', ({ requestId, response }) =>
    exchanges.push({ url: response.url, method: methods.get(requestId) ?? '?', status: response.status }),
  );
  // A request the browser refuses (CORS, connection) has no response: recorded with status 0.
  page.on('Network.loadingFailed', ({ requestId, errorText }) =>
    exchanges.push({ url: errorText, method: methods.get(requestId) ?? '?', status: 0 }),
  );
  return {
    enable: () => page.send('Network.enable'),
    clear: () => void (exchanges = []),
    all: () => exchanges,
    /** The first answer to `method` on a URL starting with `urlPrefix`, waited for up to 10 s. */
    async answer(method: string, urlPrefix: string) {
      for (const start = Date.now(); Date.now() - start < 10_000; await new Promise((r) => setTimeout(r, 100))) {
        const found = exchanges.find((e) => e.method === method && e.url.startsWith(urlPrefix));
        if (found) return found;
      }
    },
  };
}

/** What a reader does on the page: read it, click, type; each waits for its element, up to a deadline. */
function pageActions(page: HeadlessPage, shots: string | undefined) {
  return {
    text: () => page.evaluate<string>('document.body.innerText'),
    shot: async (name: string) => void (shots && (await page.screenshot(`${shots}/${name}.png`))),
    /** Clicks the first visible element of `selector` under `within` whose text includes `label`. */
    async click(selector: string, label: string, within = 'document') {
      const clicked = await page.waitFor(
        `(() => {
        const e = [...(${within})?.querySelectorAll(${JSON.stringify(selector)}) ?? []].find((e) => e.textContent.includes(${JSON.stringify(label)}) && e.getBoundingClientRect().height > 0);
        e?.scrollIntoView({ block: 'center' });
        e?.click();
        return e;
      })()`,
        20_000,
      );
      if (!clicked) throw new Error(`no ${selector} with "${label}" on the page`);
    },
    /** Types into the API client's field labelled `label`, as a person would (keystrokes into the focused editor). */
    async type(label: string, value: string) {
      const editor = `(() => {
        const labelled = [...document.querySelectorAll('[role=dialog] label')].find((l) => l.textContent.trim() === ${JSON.stringify(label)});
        const field = labelled && document.getElementById(labelled.htmlFor);
        return field && (field.matches('input') ? field : field.querySelector('[contenteditable=true]'));
      })()`;
      if (!(await page.waitFor(`(() => { const e = ${editor}; e?.focus(); return e; })()`)))
        throw new Error(`no field "${label}" in the API client`);
      await page.send('Input.insertText', { text: value });
      if (!(await page.waitFor(`(${editor}.value ?? ${editor}.textContent).includes(${JSON.stringify(value)})`)))
        throw new Error(`"${label}" did not take the text`);
    },
  };
}
