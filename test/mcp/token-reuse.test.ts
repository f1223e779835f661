import { t, type Test } from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createAgency } from '../../src/admin/agency.js';
import { createUser } from '../../src/admin/user.js';
import { createMcpClient } from '../../src/admin/mcp-client.js';
import { testDatabase, testDatabaseUrl } from '../helpers/database.js';
import { freePort } from '../helpers/ports.js';
import { startServerProcess } from '../helpers/server-process.js';
import { authorizeInBrowser, listeningApp, TestOAuthClient, withOwnPassword } from './mcp-helpers.js';

const db = (await testDatabase()).db;
const redirectUri = 'http://127.0.0.1:1/callback';
await createAgency(db, { id: 'mcp-reuse', name: 'MCP reuse agency', serviceZips: ['02108'] });
const user = await createUser(db, {
  agencyId: 'mcp-reuse',
  email: 'reuse.manager@example.org',
  name: 'Rita Reuse',
  role: 'manager',
});
const person = await withOwnPassword(db, user);
const client = await createMcpClient(db, 'Test assistant', [redirectUri]);

/** Server processes of one issuer: the browser flow goes to the issuer, token requests to any of `urls`. */
interface Servers {
  issuer: string;
  urls: string[];
}

interface TokenAnswer {
  status: number;
  body: { access_token?: string; refresh_token?: string; error?: string };
}

type Tokens = TokenAnswer['body'];

/** The parameters of exchanging a fresh authorization code: the SDK client's PKCE, the person's sign-in and consent. */
async function codeExchange(issuer: string): Promise<Record<string, string>> {
  const oauth = new TestOAuthClient(client.clientId, redirectUri);
  await new Client({ name: 'test', version: '1' })
    .connect(new StreamableHTTPClientTransport(new URL(`${issuer}/api/v1/mcp`), { authProvider: oauth }))
    .catch((err: Error) => {
      if (!/Unauthorized/.test(err.message)) throw err;
    });
  const { code } = await authorizeInBrowser(issuer, oauth.authorizationUrl!, redirectUri, person);
  return { grant_type: 'authorization_code', code, code_verifier: oauth.verifier, redirect_uri: redirectUri };
}

const refresh = (tokens: Tokens) => ({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token! });

async function tokenRequest(url: string, servers: Servers, params: Record<string, string>): Promise<TokenAnswer> {
  const body = new URLSearchParams({ client_id: client.clientId, resource: `${servers.issuer}/api/v1/mcp`, ...params });
  const res = await fetch(`${url}/api/v1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });
  return { status: res.status, body: (await res.json()) as Tokens };
}

async function toolsListStatus(url: string, accessToken: string): Promise<number> {
  const res = await fetch(`${url}/api/v1/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${accessToken}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  await res.body?.cancel();
  return res.status;
}

/** Every access token is refused by every process, and so is every refresh token (access tokens first: a refresh that wrongly works would issue more). */
async function assertEveryTokenRefused(t: Test, servers: Servers, issued: Tokens[]) {
  for (const url of servers.urls) {
    for (const { access_token } of issued)
      if (access_token)
        t.equal(await toolsListStatus(url, access_token), 401, `an access token of the grant is refused at ${url}`);
  }
  for (const tokens of issued) {
    if (!tokens.refresh_token) continue;
    const again = await tokenRequest(servers.urls[0], servers, refresh(tokens));
    t.match(again, { status: 400, body: { error: 'invalid_grant' } }, 'a refresh token of the grant is refused');
  }
}

t.test('a code or refresh token presented again later is refused, and every token of its grant with it', async (t) => {
  const { base } = await listeningApp(t);
  const servers = { issuer: base, urls: [base] };

  const exchange = await codeExchange(base);
  const granted = await tokenRequest(base, servers, exchange);
  t.equal(granted.status, 200);
  t.equal(
    await toolsListStatus(base, granted.body.access_token!),
    200,
    'the access token works before the code is presented again',
  );
  t.match(
    await tokenRequest(base, servers, exchange),
    { status: 400, body: { error: 'invalid_grant' } },
    'the code again',
  );
  await assertEveryTokenRefused(t, servers, [granted.body]);

  const family = await tokenRequest(base, servers, await codeExchange(base));
  const rotated = await tokenRequest(base, servers, refresh(family.body));
  t.equal(rotated.status, 200);
  t.match(
    await tokenRequest(base, servers, refresh(family.body)),
    { status: 400, body: { error: 'invalid_grant' } },
    'the replaced refresh token again',
  );
  await assertEveryTokenRefused(t, servers, [family.body, rotated.body]);
});

const ROUNDS = 5;
const skip = process.env.TEST_DATABASE_URL
  ? false
  : 'the race needs two server processes on one PostgreSQL database; PGlite is one session inside one process';

t.test(
  'two server processes: a code or refresh token presented at the same moment is redeemed at most once',
  { skip, timeout: 300_000 },
  async (t) => {
    const port = await freePort();
    const issuer = `http://127.0.0.1:${port}`;
    const processes = await Promise.all([
      startServerProcess(testDatabaseUrl()!, { port, issuer }),
      startServerProcess(testDatabaseUrl()!, { issuer }),
    ]);
    for (const { child } of processes) t.teardown(() => void child.kill());
    const servers = { issuer, urls: processes.map((p) => p.url) };

    await t.test('three exchanges of one code: one 200, and afterwards none of its tokens works', async (t) => {
      for (let round = 1; round <= ROUNDS; round++) {
        const exchange = await codeExchange(issuer);
        const answers = await Promise.all([0, 1, 2].map((i) => tokenRequest(servers.urls[i % 2], servers, exchange)));
        t.same(answers.map((a) => a.status).sort(), [200, 400, 400], `round ${round}: exactly one exchange succeeds`);
        t.ok(
          answers.every((a) => a.status === 200 || a.body.error === 'invalid_grant'),
          'the others get invalid_grant',
        );
        await assertEveryTokenRefused(
          t,
          servers,
          answers.map((a) => a.body),
        );
      }
    });

    await t.test(
      'two refreshes with one refresh token: at most one succeeds, and afterwards no token of the grant works',
      async (t) => {
        for (let round = 1; round <= ROUNDS; round++) {
          const granted = await tokenRequest(servers.urls[0], servers, await codeExchange(issuer));
          const answers = await Promise.all(
            servers.urls.map((url) => tokenRequest(url, servers, refresh(granted.body))),
          );
          t.ok(
            answers.filter((a) => a.status === 200).length <= 1,
            `round ${round}: at most one refresh succeeds (${answers.map((a) => a.status).join(', ')})`,
          );
          t.ok(
            answers.every((a) => a.status === 200 || a.body.error === 'invalid_grant'),
            'the others get invalid_grant',
          );
          await assertEveryTokenRefused(t, servers, [granted.body, ...answers.map((a) => a.body)]);
        }
      },
    );
  },
);
