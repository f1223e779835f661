import t, { type Test } from 'tap';
import { operations } from '../../src/generated/contract.js';
import { buildTestApp, signIn, type Response } from '../helpers/app.js';
import { tokenRequestBody } from '../helpers/identity.js';
import { testDatabase } from '../helpers/database.js';

/** NUL and lone surrogates: text no field can store. Every request carrying one is a 400 naming where, never a 500. */
const anonymous = await buildTestApp();
const phi = await signIn(anonymous, { phiMode: 'phi' });
const noPhi = await signIn(anonymous, { phiMode: 'no_phi', integration: { agencyId: phi.integration.agencyId } });
const { db } = await testDatabase();
const TOKEN_URL = '/api/v1/oauth/token';
const UNSTORABLE = ['t\u0000', 'lone \ud800 high', 'lone \udc00 low'];
let keys = 0;
const command = () => ({ 'content-type': 'application/json', 'idempotency-key': `unstorable-${++keys}-${Date.now()}` });
let addresses = 0;
const freshAddress = () => `198.51.100.${++addresses}`;

function refused(t: Test, res: Response, issue: { location: string; path: string }) {
  t.equal(res.statusCode, 400, res.body.slice(0, 300));
  const body = res.json();
  t.equal(body.code, 'PLATFORM_INVALID_REQUEST');
  const storable = body.issues.filter((i: { keyword?: string }) => i.keyword === 'storableText');
  t.match(storable, [issue], `${issue.location} ${issue.path} is named`);
}

t.test('a command body: task title and description, query-token name, a nested member name', async (t) => {
  for (const text of UNSTORABLE) {
    refused(
      t,
      await phi.request({ method: 'POST', url: '/api/v1/ext/tasks', headers: command(), payload: { title: text } }),
      { location: 'body', path: '/title' },
    );
    refused(
      t,
      await phi.request({
        method: 'POST',
        url: '/api/v1/ext/tasks',
        headers: command(),
        payload: { title: 'ok', description: text },
      }),
      { location: 'body', path: '/description' },
    );
    refused(
      t,
      await phi.request({
        method: 'POST',
        url: '/api/v1/ext/query-tokens',
        headers: command(),
        payload: { name: text, query_id: 'active_census' },
      }),
      { location: 'body', path: '/name' },
    );
  }
  refused(
    t,
    await phi.request({
      method: 'POST',
      url: '/api/v1/ext/referrals',
      headers: command(),
      payload: { service_line: 'home_health', custom_data: { 'a/b\u0000': 1 } },
    }),
    { location: 'body', path: '/custom_data/a~1b\u0000' },
  );
  const task = await phi.request({
    method: 'POST',
    url: '/api/v1/ext/tasks',
    headers: command(),
    payload: { title: 'Call back' },
  });
  refused(
    t,
    await phi.request({
      method: 'PATCH',
      url: `/api/v1/ext/tasks/${task.json().data.id}`,
      headers: command(),
      payload: { title: 'x\u0000' },
    }),
    { location: 'body', path: '/title' },
  );
});

t.test('every string query parameter of every operation, and path ids', async (t) => {
  let checked = 0;
  for (const operation of Object.values(operations)) {
    const strings = operation.queryParameters.filter((p) => (p.schema as { type?: string }).type === 'string');
    for (const parameter of strings) {
      const url = `${operation.path.replace(/\{[^}]+\}/g, 'x1')}?${parameter.name}=%00`;
      const session = operation.noPhi === 'denied' ? phi : noPhi;
      refused(
        t,
        await session.request({ method: operation.method, url, headers: operation.command ? command() : {} }),
        { location: 'query', path: parameter.name },
      );
      checked++;
    }
  }
  t.ok(checked >= 12, `${checked} string query parameters`);
  refused(t, await phi.request({ method: 'GET', url: '/api/v1/ext/patients/%00' }), { location: 'path', path: 'id' });
});

t.test(
  'a path that does not decode as UTF-8, or an overlong path parameter, is a 400 in the ApiError shape',
  async (t) => {
    const cases = [
      ['/api/v1/ext/patients/a%ED%A0%80', 'encoding'],
      ['/api/v1/ext/patients/%C3%28', 'encoding'],
      [`/api/v1/ext/patients/${'p'.repeat(101)}`, 'maxLength'],
    ];
    for (const [url, keyword] of cases) {
      const res = await phi.request({ method: 'GET', url });
      t.equal(res.statusCode, 400);
      t.match(res.json(), {
        error: 'invalid_request',
        code: 'PLATFORM_INVALID_REQUEST',
        issues: [{ location: 'path', keyword }],
      });
    }
  },
);

t.test("a governed query's parameter and free text; the refused run is audited and serves nothing", async (t) => {
  const run = (payload: object) =>
    phi.request({
      method: 'POST',
      url: '/api/v1/ext/queries/active_census/run',
      headers: { 'content-type': 'application/json' },
      payload,
    });
  refused(t, await run({ parameters: { office_id: 'o\u0000' } }), { location: 'body', path: '/parameters/office_id' });
  for (const text of UNSTORABLE) {
    const res = await run({ natural_language_input: `census for Jane Canary ${text}` });
    refused(t, res, { location: 'body', path: '/natural_language_input' });
    t.notOk(res.json().data, 'no rows');
  }
  t.equal((await run({ natural_language_input: 'census please' })).statusCode, 200, 'storable text still runs');
});

t.test('the token endpoint: client_id in a JSON or form body, and in HTTP Basic', async (t) => {
  const fields = tokenRequestBody(phi.integration);
  const json = await anonymous.request({
    method: 'POST',
    url: TOKEN_URL,
    payload: { ...fields, client_id: 'c\u0000' },
    remoteAddress: freshAddress(),
  });
  refused(t, json, { location: 'body', path: '/client_id' });
  const form = await anonymous.request({
    method: 'POST',
    url: TOKEN_URL,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ ...fields, client_id: 'c\u0000' }).toString(),
    remoteAddress: freshAddress(),
  });
  refused(t, form, { location: 'body', path: '/client_id' });
  const { client_id: _id, client_secret: _secret, ...rest } = fields;
  const basic = `Basic ${Buffer.from(`c%00:${fields.client_secret}`).toString('base64')}`;
  const viaBasic = await anonymous.request({
    method: 'POST',
    url: TOKEN_URL,
    headers: { authorization: basic },
    payload: rest,
    remoteAddress: freshAddress(),
  });
  t.equal(viaBasic.statusCode, 401, 'a client id no client has: a failed authentication');
  t.equal(viaBasic.json().error, 'invalid_client');
  for (const grant_type of ['authorization_code', 'refresh_token']) {
    const handedOver = await anonymous.request({
      method: 'POST',
      url: TOKEN_URL,
      payload: { grant_type, client_id: 'c\u0000', code: 'x', refresh_token: 'y' },
      remoteAddress: freshAddress(),
    });
    refused(t, handedOver, { location: 'body', path: '/client_id' });
  }
});

t.test('nothing refused was written: no task holds the text', async (t) => {
  const tasks = await db
    .selectFrom('tasks')
    .select('title')
    .where('agency_id', '=', phi.integration.agencyId)
    .execute();
  t.same(
    tasks.map((task) => task.title),
    ['Call back'],
  );
});

t.test(
  "the MCP surface's authorization routes: a client id, an interaction id or an email no record can hold is refused, never a 500",
  async (t) => {
    const authorize = await anonymous.app.inject({
      method: 'GET',
      url: '/api/v1/oauth/authorize?client_id=%00&response_type=code&code_challenge=x&code_challenge_method=S256',
    });
    t.ok(authorize.statusCode >= 400 && authorize.statusCode < 500, `authorize: ${authorize.statusCode}`);
    const interaction = await anonymous.app.inject({ method: 'GET', url: '/api/v1/oauth/interaction/%00' });
    t.ok(interaction.statusCode >= 400 && interaction.statusCode < 500, `interaction: ${interaction.statusCode}`);
    const revoke = await anonymous.app.inject({
      method: 'POST',
      url: '/api/v1/oauth/revoke',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'token=x&client_id=%00',
    });
    t.ok(revoke.statusCode < 500, `revoke: ${revoke.statusCode}`);
  },
);
