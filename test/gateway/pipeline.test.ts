import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { sql } from 'kysely';
import { operations, type OperationDefinition } from '../../src/generated/contract.js';
import { buildSignedInApp, buildTestApp, signIn } from '../helpers/app.js';
import { testDatabase } from '../helpers/database.js';
import { issueTestToken, bearer } from '../helpers/identity.js';

const { db } = await testDatabase();
const api = await buildTestApp();
const key = () => `key-${Math.random().toString(36).slice(2, 14)}`;

t.test('every partition route, health included, requires a bearer token', async (t) => {
  for (const op of Object.values(operations) as OperationDefinition[]) {
    if (!op.authenticated) continue;
    const url = op.path.replace(/\{[^}]+\}/g, 'x1');
    const res = await api.request({
      method: op.method as 'GET',
      url,
      headers: op.command ? { 'idempotency-key': key() } : {},
    });
    t.equal(res.statusCode, 401, op.operationId);
    t.equal(res.json().code, 'PLATFORM_AUTHENTICATION_REQUIRED');
    t.match(res.headers['www-authenticate'], /^Bearer /);
  }
  const garbage = await api.request({
    method: 'GET',
    url: '/api/v1/ext/health',
    headers: { authorization: 'Bearer not.a.jwt' },
  });
  t.equal(garbage.json().code, 'PLATFORM_INVALID_CREDENTIAL');
});

t.test('an authenticated call carries rate-limit headers', async (t) => {
  const signed = await signIn(api);
  const res = await signed.request({ method: 'GET', url: '/api/v1/ext/health' });
  t.equal(res.statusCode, 200);
  t.match(res.headers['ratelimit-policy'], /"minute";q=600;w=60/);
  t.match(res.headers.ratelimit, /"minute";r=\d+;t=\d+/);
});

t.test(
  'a narrowed token stays narrow after a wider token of the same integration was seen, and the reverse',
  async (t) => {
    const wide = await signIn(api);
    const create = (token?: string) =>
      wide.request({
        method: 'POST',
        url: '/api/v1/ext/tasks',
        headers: { ...(token ? bearer(token) : {}), 'idempotency-key': key() },
        payload: { title: 'x' },
      });
    t.equal((await create()).statusCode, 200, 'the wide token may create');
    const narrow = await issueTestToken(api, wide.integration, 'phi', 'external:patients:read');
    t.equal((await create(narrow)).json().error.code, 'PLATFORM_SCOPE_NOT_GRANTED');
    t.equal((await create()).statusCode, 200, 'the wide token is not narrowed by the narrow one');
  },
);

t.test('scope, policy and PHI mode are enforced from the route metadata', async (t) => {
  const narrow = await signIn(api);
  const token = await issueTestToken(api, narrow.integration, 'phi', 'external:patients:read');
  const noScope = await api.request({
    method: 'POST',
    url: '/api/v1/ext/tasks',
    headers: { ...bearer(token), 'idempotency-key': key() },
    payload: { title: 'x' },
  });
  t.equal(noScope.statusCode, 403);
  t.equal(noScope.json().error.code, 'PLATFORM_SCOPE_NOT_GRANTED');

  const readOnly = await signIn(api, {
    integration: {
      capabilities: Object.values(operations)
        .filter((o) => !o.command)
        .map((o) => o.capability),
    },
  });
  const denied = await readOnly.request({
    method: 'POST',
    url: '/api/v1/ext/tasks',
    headers: { 'idempotency-key': key() },
    payload: { title: 'x' },
  });
  t.equal(denied.statusCode, 403);
  t.equal(denied.json().error.code, 'PLATFORM_POLICY_DENIED', 'a token alone gives no write permission');

  const noPhi = await signIn(api, { phiMode: 'no_phi' });
  const collections = await noPhi.request({ method: 'GET', url: '/api/v1/ext/working-collections' });
  t.equal(collections.statusCode, 403);
  t.equal(collections.json().error.code, 'PLATFORM_PHI_MODE_DENIED');
});

t.test('PHI responses are never cached', async (t) => {
  const signed = await signIn(api);
  const created = await signed.request({
    method: 'POST',
    url: '/api/v1/ext/tasks',
    headers: { 'idempotency-key': key() },
    payload: { title: 'Call back' },
  });
  const read = await signed.request({ method: 'GET', url: `/api/v1/ext/tasks/${created.json().data.id}` });
  t.equal(read.headers['cache-control'], 'no-store');
  const health = await signed.request({ method: 'GET', url: '/api/v1/ext/health' });
  t.notOk(health.headers['cache-control']);
});

t.test('commands replay byte for byte, refuse a different body under the same key, and run once', async (t) => {
  const signed = await signIn(api);
  const headers = { 'idempotency-key': key() };
  const first = await signed.request({
    method: 'POST',
    url: '/api/v1/ext/tasks',
    headers,
    payload: { title: 'Chase signature', priority: 'high' },
  });
  t.equal(first.statusCode, 200);
  t.notOk(first.headers['idempotent-replayed']);
  const again = await signed.request({
    method: 'POST',
    url: '/api/v1/ext/tasks',
    headers,
    payload: { priority: 'high', title: 'Chase signature' },
  });
  t.equal(again.body, first.body, 'same bytes, key order in the body does not matter');
  t.equal(again.headers['idempotent-replayed'], 'true');
  const other = await signed.request({
    method: 'POST',
    url: '/api/v1/ext/tasks',
    headers,
    payload: { title: 'Something else' },
  });
  t.equal(other.statusCode, 409);
  t.equal(other.json().error.code, 'PLATFORM_IDEMPOTENCY_CONFLICT');
  const rows = await db.selectFrom('tasks').select('id').where('agency_id', '=', signed.integration.agencyId).execute();
  t.equal(rows.length, 1);

  const elsewhere = await signIn(api);
  const sameKeyOtherAgency = await elsewhere.request({
    method: 'POST',
    url: '/api/v1/ext/tasks',
    headers,
    payload: { title: 'Chase signature', priority: 'high' },
  });
  t.not(sameKeyOtherAgency.json().data.id, first.json().data.id, 'keys are scoped per agency and extension');
});

t.test(
  'a retry answered from the keys this process remembers is the same replay, and still bound to its PHI mode',
  async (t) => {
    const signed = await signIn(api);
    const noPhiToken = await issueTestToken(api, signed.integration, 'no_phi');
    const post = (token: string) =>
      api.request({
        method: 'POST',
        url: '/api/v1/ext/tasks',
        headers: { ...bearer(token), 'idempotency-key': 'remembered-replay-0001' },
        payload: { title: 'Chase signature', priority: 'high' },
      });
    const first = await post(signed.token);
    // The first retry reads the stored answer from the database, and the process keeps it; the next is served from there.
    const [fromDatabase, fromMemory] = [await post(signed.token), await post(signed.token)];
    for (const replay of [fromDatabase, fromMemory]) {
      t.equal(replay.body, first.body, 'the stored bytes');
      t.equal(replay.headers['idempotent-replayed'], 'true');
      t.equal(replay.headers['svc-extension-contract-version'], first.headers['svc-extension-contract-version']);
    }
    const otherMode = await post(noPhiToken);
    t.equal(otherMode.statusCode, 409, 'the same key from the other PHI mode is never a replay');
    t.equal(otherMode.json().error.code, 'PLATFORM_IDEMPOTENCY_CONFLICT');
    const tasks = await db
      .selectFrom('tasks')
      .select('id')
      .where('agency_id', '=', signed.integration.agencyId)
      .execute();
    t.equal(tasks.length, 1, 'it ran once');
  },
);

t.test('a command, its audit record and its metering row commit together', async (t) => {
  const signed = await signIn(api);
  const res = await signed.request({
    method: 'POST',
    url: '/api/v1/ext/tasks',
    headers: { 'idempotency-key': key() },
    payload: { title: 'Audit me' },
  });
  const taskId = res.json().data.id;
  const audit = await db
    .selectFrom('audit_events')
    .selectAll()
    .where('agency_id', '=', signed.integration.agencyId)
    .execute();
  t.match(audit, [
    {
      operation_id: 'createTask',
      outcome: 'success',
      resource_type: 'task',
      resource_ids: [taskId],
      request_id: res.headers['x-request-id'],
      phi_mode: 'phi',
    },
  ]);
  const metered = await db
    .selectFrom('metering_events')
    .selectAll()
    .where('request_id', '=', String(res.headers['x-request-id']))
    .execute();
  t.match(metered, [{ operation_id: 'createTask', status: 200, cost_units: operations.createTask.costUnits }]);
});

t.test(
  'every read is metered through the gateway, answered at once, after I/O or refused, and flushed at close',
  async (t) => {
    const own = await buildTestApp({}, t);
    const signed = await signIn(own);
    const created = await signed.request({
      method: 'POST',
      url: '/api/v1/ext/tasks',
      headers: { 'idempotency-key': key() },
      payload: { title: 'Meter my reads' },
    });
    const before = Date.now();
    const calls = [
      await signed.request({ method: 'GET', url: '/api/v1/ext/health' }),
      await signed.request({ method: 'GET', url: `/api/v1/ext/tasks/${created.json().data.id}` }),
      await signed.request({
        method: 'GET',
        url: '/api/v1/ext/working-collections',
        headers: { authorization: `Bearer ${await issueTestToken(own, signed.integration, 'no_phi')}` },
      }),
    ];
    const after = Date.now();
    await own.app.close();
    const requestIds = calls.map((c) => String(c.headers['x-request-id']));
    const metered = await db.selectFrom('metering_events').selectAll().where('request_id', 'in', requestIds).execute();
    const byRequest = new Map(metered.map((m) => [m.request_id, m]));
    const { agencyId, extensionId } = signed.integration;
    t.match(
      requestIds.map((id) => byRequest.get(id)),
      [
        {
          agency_id: agencyId,
          extension_id: extensionId,
          operation_id: 'getHealth',
          status: 200,
          cost_units: operations.getHealth.costUnits,
        },
        {
          agency_id: agencyId,
          extension_id: extensionId,
          operation_id: 'getTask',
          status: 200,
          cost_units: operations.getTask.costUnits,
        },
        { agency_id: agencyId, extension_id: extensionId, operation_id: 'listWorkingCollections', status: 403 },
      ],
    );
    for (const m of metered) {
      t.ok(m.duration_ms >= 0, `${m.operation_id} has a duration`);
      t.ok(
        m.occurred_at.getTime() >= before && m.occurred_at.getTime() <= after,
        `${m.operation_id} occurred during its call`,
      );
    }
  },
);

t.test(
  "a refused call's audit record names the resource type of the operation's tag, before any handler ran",
  async (t) => {
    const signed = await signIn(api);
    const res = await signed.request({
      method: 'POST',
      url: '/api/v1/ext/tasks',
      headers: { 'idempotency-key': key() },
      payload: { title: '' },
    });
    t.equal(res.statusCode, 400);
    const requestId = String(res.headers['x-request-id']);
    const deadline = Date.now() + 3_000;
    let audit = await db.selectFrom('audit_events').selectAll().where('request_id', '=', requestId).executeTakeFirst();
    while (!audit && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
      audit = await db.selectFrom('audit_events').selectAll().where('request_id', '=', requestId).executeTakeFirst();
    }
    t.match(audit, {
      operation_id: 'createTask',
      outcome: 'failure',
      status: 400,
      resource_type: 'task',
      resource_ids: [],
    });
  },
);

t.test('when the audit write fails, the command fails with 503 and nothing of it is committed', async (t) => {
  const signed = await signIn(api);
  await sql`alter table audit_events add constraint refuse_task_audit check (operation_id <> 'createTask') not valid`.execute(
    db,
  );
  t.teardown(() => sql`alter table audit_events drop constraint refuse_task_audit`.execute(db));
  const res = await signed.request({
    method: 'POST',
    url: '/api/v1/ext/tasks',
    headers: { 'idempotency-key': key() },
    payload: { title: 'Never stored' },
  });
  t.equal(res.statusCode, 503);
  t.equal(res.json().error.code, 'PLATFORM_AUDIT_WRITE_FAILED');
  const tasks = await db
    .selectFrom('tasks')
    .select('id')
    .where('agency_id', '=', signed.integration.agencyId)
    .execute();
  t.equal(tasks.length, 0);
  const keys = await db
    .selectFrom('idempotency_keys')
    .select('key')
    .where('agency_id', '=', signed.integration.agencyId)
    .execute();
  t.equal(keys.length, 0, 'the key can be retried');
});

t.test('rate limit, daily quota and cost budget answer with their codes', async (t) => {
  const limited = await signIn(api, { integration: { rateLimitPerMinute: 3 } });
  // The calls below must fall in one minute window (and so in one day): close to its end, start in the next.
  const leftInMinute = 60_000 - (Date.now() % 60_000);
  if (leftInMinute < 3_000) await sleep(leftInMinute);
  const statuses = [];
  for (let i = 0; i < 4; i++)
    statuses.push((await limited.request({ method: 'GET', url: '/api/v1/ext/health' })).statusCode);
  t.same(statuses, [200, 200, 200, 429]);
  const refused = await limited.request({ method: 'GET', url: '/api/v1/ext/health' });
  t.equal(refused.json().error.code, 'PLATFORM_RATE_LIMITED');
  t.ok(Number(refused.headers['retry-after']) >= 1);

  const quota = await signIn(api, { integration: { dailyQuota: 1 } });
  await quota.request({ method: 'GET', url: '/api/v1/ext/health' });
  t.equal(
    (await quota.request({ method: 'GET', url: '/api/v1/ext/health' })).json().error.code,
    'PLATFORM_QUOTA_EXCEEDED',
  );

  const budget = await signIn(api, { integration: { dailyCostBudget: 4 } });
  const run = await budget.request({ method: 'POST', url: '/api/v1/ext/queries/active_census/run', payload: {} });
  t.equal(run.statusCode, 402);
  t.equal(run.json().error.code, 'PLATFORM_COST_LIMIT_EXCEEDED');
});

t.test('contract version 1 is served from the same handler, shaped by the document', async (t) => {
  const signed = await signIn(api);
  const v2 = await signed.request({
    method: 'POST',
    url: '/api/v1/ext/tasks',
    headers: { 'idempotency-key': key() },
    payload: { title: 'Versioned', assignee_id: 'reviewer' },
  });
  const id = v2.json().data.id;
  t.equal(v2.json().data.assignee_id, 'reviewer');
  t.ok('completed_at' in v2.json().data);
  const v1 = await signed.request({
    method: 'GET',
    url: `/api/v1/ext/tasks/${id}`,
    headers: { 'svc-contract-version': '1' },
  });
  t.equal(v1.headers['svc-extension-contract-version'], '1');
  t.equal(v1.json().data.assigned_to, 'reviewer', 'v1 name');
  t.notOk('assignee_id' in v1.json().data);
  t.notOk('completed_at' in v1.json().data, 'added in v2');
  const health = await signed.request({
    method: 'GET',
    url: '/api/v1/ext/health',
    headers: { 'svc-contract-version': '1' },
  });
  t.notOk('version' in health.json().data, 'platform family differs too');
});

t.test(
  'PostgreSQL: 20 parallel identical commands create exactly one task',
  { skip: process.env.TEST_DATABASE_URL ? false : 'needs real PostgreSQL (PGlite runs one transaction at a time)' },
  async (t) => {
    const signed = await buildSignedInApp();
    const headers = { 'idempotency-key': key() };
    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        signed.request({ method: 'POST', url: '/api/v1/ext/tasks', headers, payload: { title: 'Once' } }),
      ),
    );
    t.same([...new Set(responses.map((r) => r.statusCode))], [200]);
    t.equal(new Set(responses.map((r) => r.body)).size, 1, 'every response carries the same bytes');
    t.equal(responses.filter((r) => r.headers['idempotent-replayed'] !== 'true').length, 1);
    const rows = await db
      .selectFrom('tasks')
      .select('id')
      .where('agency_id', '=', signed.integration.agencyId)
      .execute();
    t.equal(rows.length, 1);
  },
);
