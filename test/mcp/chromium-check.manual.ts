/**
 * Manual check, not part of the suite (tap runs *.test.ts only): the authorization code flow driven by headless
 * Chromium (Debian's `chromium`) through the DevTools protocol: it opens the authorization URL, fills and submits the
 * login form, screenshots the consent page, allows, and lands on the client's loopback redirect URI with a code.
 * Run: node --experimental-websocket --import tsx test/mcp/chromium-check.manual.ts OUT_DIR
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { t } from 'tap';
import { createAgency } from '../../src/admin/agency.js';
import { createUser } from '../../src/admin/user.js';
import { createMcpClient } from '../../src/admin/mcp-client.js';
import { testDatabase } from '../helpers/database.js';
import { openHeadlessChromium } from '../helpers/chromium.js';
import { freePort } from '../helpers/ports.js';
import { listeningApp, withOwnPassword } from './mcp-helpers.js';

t.setTimeout(600_000);
const out = process.argv[2] ?? '.';
const db = (await testDatabase()).db;
const { base } = await listeningApp(t);
const callbackPort = await freePort();
const redirectUri = `http://127.0.0.1:${callbackPort}/callback`;
const received = new Promise<URL>((resolve) => {
  const server = createServer((req, res) => {
    res.end('<h1>Connected</h1>');
    server.close();
    resolve(new URL(req.url!, redirectUri));
  }).listen(callbackPort, '127.0.0.1');
});
await createAgency(db, { id: 'chromium', name: 'Chromium agency', serviceZips: ['02108'] });
const user = await createUser(db, {
  agencyId: 'chromium',
  email: 'browser.user@example.org',
  name: 'Bea Browser',
  role: 'manager',
});
const person = await withOwnPassword(db, user);
const client = await createMcpClient(db, 'Chromium assistant', [redirectUri]);
const verifier = randomBytes(32).toString('base64url');
const authorizationUrl = `${base}/api/v1/oauth/authorize?${new URLSearchParams({
  client_id: client.clientId,
  redirect_uri: redirectUri,
  response_type: 'code',
  scope: 'mcp:tools platform:read no_phi offline_access',
  prompt: 'consent',
  resource: `${base}/api/v1/mcp`,
  state: 'xyz',
  code_challenge: createHash('sha256').update(verifier).digest('base64url'),
  code_challenge_method: 'S256',
})}`;

const page = await openHeadlessChromium(t, { width: 900, height: 800 });
const settle = () => new Promise((r) => setTimeout(r, 1500));
const shot = (name: string) => page.screenshot(`${out}/${name}.png`);
const evaluate = page.evaluate;
/** The page's text once it matches (a posted form's answer takes a moment on a loaded machine), or the last text after 15 s. */
async function pageText(pattern: RegExp): Promise<string> {
  let text = '';
  for (const deadline = Date.now() + 15_000; Date.now() < deadline && !pattern.test(text); await settle())
    text = String(await evaluate('document.body?.innerText ?? ""'));
  return text;
}

await t.test('the flow in headless Chromium', async (t) => {
  await page.navigate(authorizationUrl);
  t.match(await pageText(/Sign in to connect/), /Sign in to connect Chromium assistant/);
  await shot('1-login');
  await evaluate(
    `document.getElementById('email').value = ${JSON.stringify(person.email)}; document.getElementById('password').value = ${JSON.stringify(person.password)}; document.querySelector('form').submit(); 1`,
  );
  t.match(await pageText(/Allow Chromium assistant\?/), /Allow Chromium assistant\?/);
  await shot('2-consent');
  await evaluate(`document.querySelector('button[value=allow]').click(); 1`);
  const callback = await received;
  await settle();
  await shot('3-callback');
  t.ok(callback.searchParams.get('code'), 'the redirect URI got a code');
  t.equal(callback.searchParams.get('state'), 'xyz');
  const token = await fetch(`${base}/api/v1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      redirect_uri: redirectUri,
      client_id: client.clientId,
      code_verifier: verifier,
      resource: `${base}/api/v1/mcp`,
    }),
  }).then((r) => r.json() as Promise<{ access_token?: string; refresh_token?: string }>);
  t.ok(token.access_token && token.refresh_token, 'the code exchanges for tokens');
});
