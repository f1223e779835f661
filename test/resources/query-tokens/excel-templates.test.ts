import t from 'tap';
import { createServer } from 'node:net';
import { randomUUID } from 'node:crypto';
import ts from 'typescript';
import { buildTestApp, signIn } from '../../helpers/app.js';
import { testDatabase } from '../../helpers/database.js';
import { seedDemoAgency } from '../../../src/demo/seed.js';
import { GOVERNED_QUERIES } from '../../../src/resources/queries/governed-queries.js';
import { column, type GovernedQuery } from '../../../src/resources/queries/governed-query.js';
import { columnTypes, letBindings, requestDescription, type DescribedRequest } from './m-request.js';

const { db } = await testDatabase();

/** More rows than a template's page (1000), so that a refresh follows the cursor. */
const visitLog: GovernedQuery = {
  id: 'test_visit_log',
  title: 'Visit log',
  description: 'Every visit.',
  parameters: { properties: {} },
  columns: [
    column('visit_id', 'string', 'Visit id.'),
    column('discipline', 'string', 'Discipline.'),
    column('scheduled_start', 'date-time', 'Scheduled start.', { reduce: 'year' }),
    column('duration_minutes', 'integer', 'Minutes.'),
  ],
  order: { columns: ['visit_id'], direction: 'asc' },
  scope: 'external:visits:read',
  capability: 'visits.read',
  costUnits: 1,
  rows: (store) =>
    store
      .selectFrom('visits')
      .select(['visits.id as visit_id', 'visits.discipline', 'visits.scheduled_start', 'visits.duration_minutes']),
};

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const port = await freePort();
const baseUrl = `http://127.0.0.1:${port}`;
const api = await buildTestApp({ tokenIssuer: baseUrl }, t, undefined, [...GOVERNED_QUERIES, visitLog]);
await api.app.listen({ port, host: '127.0.0.1' });
const session = await signIn(api, { phiMode: 'phi' });
const agencyId = session.integration.agencyId;
await seedDemoAgency(db, { agencyId, size: 'small' });

const created = await session.request({
  method: 'POST',
  url: '/api/v1/ext/query-tokens',
  headers: { 'idempotency-key': `tpl-${randomUUID()}` },
  payload: { name: 'Visit log: morning refresh', query_id: 'test_visit_log', phi_mode: 'phi' },
});
const token = created.json().data as { id: string; token: string };
const expected = await db
  .selectFrom('visits')
  .select(['id', 'duration_minutes'])
  .where('agency_id', '=', agencyId)
  .orderBy('id')
  .execute();

async function template(type: string) {
  const res = await session.request({
    method: 'GET',
    url: `/api/v1/ext/query-tokens/${token.id}/templates/excel/${type}`,
  });
  if (res.statusCode !== 200) throw new Error(`${type} template: ${res.statusCode} ${res.body}`);
  return res;
}

/** What the wire carries, checked as the contract's JSON. */
async function send(request: DescribedRequest) {
  const res = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body });
  const answer = await res.json();
  if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(answer)}`);
  return answer as { data: { rows: Record<string, unknown>[]; nextCursor: string | null } };
}

t.test('each template names the query and the file, and never holds the secret', async (t) => {
  t.ok(expected.length > 1000, `${expected.length} rows: more than one template page`);
  for (const [type, extension] of [
    ['power-query', 'pq'],
    ['office-script', 'ts'],
  ]) {
    const res = await template(type);
    t.match(res.headers['content-type'], /^text\/plain/);
    t.equal(res.headers['content-disposition'], `attachment; filename="visit-log-morning-refresh.${extension}"`);
    t.match(res.body, 'test_visit_log');
    t.match(res.body, baseUrl);
    t.notOk(res.body.includes(token.token), 'no secret');
    t.notOk(/qt_[A-Za-z0-9_-]{43}/.test(res.body), 'no secret of any token');
  }
});

t.test(
  'power-query: the request it describes, sent as written with the pasted token, walks every row; the table is typed as declared',
  async (t) => {
    const script = (await template('power-query')).body;
    t.match(script, /Formula\.Firewall/, 'says why the token is a parameter');
    const bindings = letBindings(script);
    const normalized = (name: string) => (bindings.get(name) ?? '').replace(/\s+/g, ' ');
    // The two bindings the interpreter replays rather than evaluates, as they must read:
    t.match(
      normalized('FetchPage'),
      'Web.Contents(BaseUrl, [RelativePath = RelativePath, Headers = RequestHeaders, Content = Json.FromValue(RequestBody(cursor)),',
    );
    t.match(normalized('FetchPage'), 'if Status = 200 then Answer[data] else error');
    t.equal(
      normalized('Pages'),
      'List.Generate(() => FetchPage(null), (page) => page <> null, (page) => if page[nextCursor] = null then null else FetchPage(page[nextCursor]))',
    );
    t.equal(normalized('Rows'), 'List.Combine(List.Transform(Pages, each [rows]))');

    const describe = requestDescription(bindings, token.token);
    const first = describe(null);
    t.same(first, {
      url: `${baseUrl}/api/v1/ext/queries/test_visit_log/run`,
      method: 'POST',
      headers: {
        Authorization: `Bearer ${token.token}`,
        'Content-Type': 'application/json',
        'svc-contract-version': '2',
      },
      body: '{"limit":1000}',
    });
    const rows: Record<string, unknown>[] = [];
    let requests = 0;
    // List.Generate: the first page, then while the page is not null, the next one from its nextCursor.
    for (let page: Awaited<ReturnType<typeof send>>['data'] | null = (await send(first)).data; page !== null; ) {
      requests++;
      rows.push(...page.rows);
      page = page.nextCursor === null ? null : (await send(describe(page.nextCursor))).data;
    }
    t.equal(requests, Math.ceil(expected.length / 1000));
    t.same(
      rows.map((r) => r.visit_id),
      expected.map((r) => r.id),
      'every row once, in order',
    );
    t.same(columnTypes(bindings), [
      ['visit_id', 'type text'],
      ['discipline', 'type text'],
      ['scheduled_start', 'type datetimezone'],
      ['duration_minutes', 'Int64.Type'],
    ]);
  },
);

t.test('office-script: the script itself, with the token pasted, fills one sheet with every row', async (t) => {
  const source = (await template('office-script')).body;
  t.equal(source.match(/PASTE_QUERY_TOKEN_HERE/g)?.length, 1);
  const { outputText, diagnostics } = ts.transpileModule(source.replace('PASTE_QUERY_TOKEN_HERE', token.token), {
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.None },
    reportDiagnostics: true,
  });
  t.same(diagnostics, [], 'valid TypeScript');
  const written: { name: string; values?: unknown[][]; at?: number[]; cleared: boolean }[] = [];
  const workbook = {
    getWorksheet: () => undefined,
    addWorksheet: (name: string) => {
      const sheet = { name, cleared: false } as (typeof written)[number];
      written.push(sheet);
      return {
        getRange: () => ({ clear: () => void (sheet.cleared = true) }),
        getRangeByIndexes: (row: number, col: number, rows: number, cols: number) => ({
          setValues: (values: unknown[][]) => Object.assign(sheet, { values, at: [row, col, rows, cols] }),
        }),
      };
    },
  };
  const sent: string[] = [];
  const recordingFetch = (url: string, init: RequestInit) => {
    sent.push(String(init.body));
    return fetch(url, init);
  };
  const main = new Function('fetch', `${outputText}\nreturn main;`)(recordingFetch) as (
    wb: typeof workbook,
  ) => Promise<void>;
  await main(workbook);
  t.equal(written.length, 1);
  const [sheet] = written;
  t.equal(sheet.name, 'Visit log  morning refresh');
  t.ok(sheet.cleared);
  t.same(sheet.values![0], ['visit_id', 'discipline', 'scheduled_start', 'duration_minutes']);
  t.same(
    sheet.values!.slice(1).map((r) => r[0]),
    expected.map((r) => r.id),
  );
  t.same(
    sheet.values!.slice(1).map((r) => r[3]),
    expected.map((r) => r.duration_minutes ?? ''),
    'nulls as empty cells',
  );
  t.same(sheet.at, [0, 0, expected.length + 1, 4]);
  t.equal(sent.length, Math.ceil(expected.length / 1000));
  t.equal(sent[0], '{"limit":1000}');
});

t.test(
  "CORS: runQuery answers Office origins' preflight and query-token answers; nothing else gains CORS",
  async (t) => {
    const run = `${baseUrl}/api/v1/ext/queries/test_visit_log/run`;
    const preflight = (origin: string, url = run) =>
      fetch(url, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization,content-type',
        },
      });
    for (const origin of [
      'null',
      'https://excel.officeapps.live.com',
      'https://contoso-my.sharepoint.officescripts.microsoftusercontent.com',
    ]) {
      const res = await preflight(origin);
      t.equal(res.status, 204, origin);
      t.equal(res.headers.get('access-control-allow-origin'), origin);
      t.match(res.headers.get('access-control-allow-headers'), /authorization/);
      t.equal(res.headers.get('access-control-allow-methods'), 'POST');
    }
    for (const origin of [
      'https://evil.example',
      'https://officeapps.live.com.evil.example',
      'http://excel.officeapps.live.com',
    ]) {
      const res = await preflight(origin);
      t.equal(res.status, 405, origin);
      t.equal(res.headers.get('access-control-allow-origin'), null);
    }
    t.equal((await preflight('null', `${baseUrl}/api/v1/ext/health`)).status, 405, 'no other route has a preflight');
    const withToken = await fetch(run, {
      method: 'POST',
      headers: { origin: 'null', authorization: `Bearer ${token.token}`, 'content-type': 'application/json' },
      body: '{"limit":1}',
    });
    t.equal(withToken.status, 200);
    t.equal(withToken.headers.get('access-control-allow-origin'), 'null');
    t.match(withToken.headers.get('access-control-expose-headers'), /x-request-id/);
    const refused = await fetch(run, {
      method: 'POST',
      headers: { origin: 'null', authorization: `Bearer qt_${'B'.repeat(43)}`, 'content-type': 'application/json' },
      body: '{}',
    });
    t.equal(refused.status, 401);
    t.equal(refused.headers.get('access-control-allow-origin'), 'null', 'a refusal is readable by the script too');
    const withJwt = await fetch(run, {
      method: 'POST',
      headers: { origin: 'null', authorization: `Bearer ${session.token}`, 'content-type': 'application/json' },
      body: '{"limit":1}',
    });
    t.equal(withJwt.status, 200);
    t.equal(
      withJwt.headers.get('access-control-allow-origin'),
      null,
      "an access token's answer is never readable cross-origin",
    );
  },
);

t.test("a revoked token's template is a conflict", async (t) => {
  const other = await session.request({
    method: 'POST',
    url: '/api/v1/ext/query-tokens',
    headers: { 'idempotency-key': `tpl-${randomUUID()}` },
    payload: { name: 'Gone', query_id: 'active_census' },
  });
  const id = other.json().data.id;
  await session.request({
    method: 'DELETE',
    url: `/api/v1/ext/query-tokens/${id}`,
    headers: { 'idempotency-key': `tpl-${randomUUID()}` },
  });
  const res = await session.request({
    method: 'GET',
    url: `/api/v1/ext/query-tokens/${id}/templates/excel/power-query`,
  });
  t.equal(res.statusCode, 409);
  t.match(res.json().error, { code: 'PLATFORM_CONFLICT', details: { status: 'revoked' } });
  t.equal(
    (await session.request({ method: 'GET', url: `/api/v1/ext/query-tokens/${token.id}/templates/excel/csv` }))
      .statusCode,
    400,
    'templateType is an enum',
  );
});
