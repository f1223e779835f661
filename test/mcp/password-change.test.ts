import t from 'tap';
import { createAgency } from '../../src/admin/agency.js';
import { createMcpClient } from '../../src/admin/mcp-client.js';
import { createUser } from '../../src/admin/user.js';
import { testDatabase } from '../helpers/database.js';
import { sessionPerson, startSession } from '../../src/identity/console-sessions.js';
import { findPerson } from '../../src/identity/mcp-authorization/people.js';
import { FormBrowser, formAction } from './browser.js';
import { listeningApp, TestOAuthClient } from './mcp-helpers.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/** The first sign-in of a person: the password an administrator handed over (`user create`) must be replaced. */
const db = (await testDatabase()).db;
const { base } = await listeningApp(t);
const redirectUri = 'http://127.0.0.1:9/callback';
await createAgency(db, { id: 'password-change', name: 'Password change agency', serviceZips: ['02108'] });
const user = await createUser(db, {
  agencyId: 'password-change',
  email: 'first.time@example.org',
  name: 'Fay First',
  role: 'staff',
});
const mcpClient = await createMcpClient(db, 'Test assistant', [redirectUri]);
const isCallback = (url: string) => url.startsWith(redirectUri);
// A console session of the person, opened before the first sign-in's change.
const consoleSession = await startSession(db, (await findPerson(db, user.userId))!);

/** A browser at the login page of a fresh authorization request of the SDK's client. */
async function atLogin() {
  const oauth = new TestOAuthClient(mcpClient.clientId, redirectUri);
  await new Client({ name: 'test', version: '1' })
    .connect(new StreamableHTTPClientTransport(new URL(`${base}/api/v1/mcp`), { authProvider: oauth }))
    .catch(() => {});
  const browser = new FormBrowser();
  const login = await browser.follow(oauth.authorizationUrl!.href, isCallback);
  return { browser, login };
}

const flagOf = async () =>
  (
    await db
      .selectFrom('users')
      .select('password_change_required')
      .where('id', '=', user.userId)
      .executeTakeFirstOrThrow()
  ).password_change_required;

t.test(
  'the initial password leads to a page asking for a new one, not to consent; a bad choice is refused there',
  async (t) => {
    t.equal(await flagOf(), true, 'user create asks for a change');
    const { browser, login } = await atLogin();
    const change = await browser.post(
      formAction(login.body, base),
      { email: user.email, password: user.initialPassword },
      isCallback,
    );
    t.equal(change.status, 200);
    t.match(change.body, /Choose your own password/);
    t.notMatch(change.body, /Allow Test assistant/, 'no consent before the change');
    const action = formAction(change.body, base);
    t.match(action, /\/password$/);
    const attempt = (fields: Record<string, string>) =>
      browser.post(action, { email: user.email, password: user.initialPassword, ...fields }, isCallback);
    const short = await attempt({ new_password: 'short', confirm_password: 'short' });
    t.equal(short.status, 400);
    t.match(short.body, /at least 12 characters/);
    t.match(
      (await attempt({ new_password: 'a-long-new-password', confirm_password: 'another-long-one' })).body,
      /not the same/,
    );
    t.match(
      (await attempt({ new_password: user.initialPassword, confirm_password: user.initialPassword })).body,
      /other than the one you were given/,
    );
    const wrongCurrent = await browser.post(
      action,
      {
        email: user.email,
        password: 'not-the-one-given',
        new_password: 'a-long-new-password',
        confirm_password: 'a-long-new-password',
      },
      isCallback,
    );
    t.equal(wrongCurrent.status, 401, 'the page proves nothing: the given password is checked again');
    t.equal(await flagOf(), true, 'nothing changed yet');
    const consent = await attempt({ new_password: 'my own long password', confirm_password: 'my own long password' });
    t.equal(consent.status, 200);
    t.match(consent.body, /Allow Test assistant/, 'on to consent');
    t.equal(await flagOf(), false);
  },
);

t.test('the change is on the audit trail with the person, and ends their console sessions', async (t) => {
  const audit = await db
    .selectFrom('audit_events')
    .select(['details', 'resource_ids'])
    .where('agency_id', '=', 'password-change')
    .where('operation_id', '=', 'changeOwnPassword')
    .execute();
  t.match(audit, [{ details: { actor: `user:${user.userId}` }, resource_ids: [user.userId] }]);
  t.equal(await sessionPerson(db, consoleSession), undefined, 'the console session opened before it has ended');
});

t.test('then the chosen password signs in straight to consent, and the one handed over no longer works', async (t) => {
  const { browser, login } = await atLogin();
  const old = await browser.post(
    formAction(login.body, base),
    { email: user.email, password: user.initialPassword },
    isCallback,
  );
  t.equal(old.status, 401);
  const again = await atLogin();
  const consent = await again.browser.post(
    formAction(again.login.body, base),
    { email: user.email, password: 'my own long password' },
    isCallback,
  );
  t.match(consent.body, /Allow Test assistant/);
});
