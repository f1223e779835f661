import { randomUUID } from 'node:crypto';
import t, { type Test } from 'tap';
import { errorCodes, operations, type OperationDefinition, type OperationId } from '../../src/generated/contract.js';
import { callOperation } from '../../src/gateway/core/direct-call.js';
import type { PhiMode } from '../../src/shared/principal.js';
import { setIntegrationStatus } from '../../src/admin/integration.js';
import { buildTestApp, signIn } from '../helpers/app.js';
import { seededAgency } from '../helpers/clinical.js';
import { testDatabase } from '../helpers/database.js';
import { issueTestToken, bearer, testPrincipal } from '../helpers/identity.js';

const { db } = await testDatabase();
const api = await buildTestApp();
const { agencyId } = await seededAgency(api);
const [{ id: patientId }] = await db
  .selectFrom('patients')
  .select('id')
  .where('agency_id', '=', agencyId)
  .orderBy('id')
  .limit(1)
  .execute();
const ALL_SCOPES = (Object.values(operations) as OperationDefinition[]).flatMap((o) => (o.scope ? [o.scope] : []));
const key = () => `key-${randomUUID()}`;

/**
 * An app of its own (closing it flushes its metering and audit buffers) and an HTTP session of a new integration of
 * the seeded agency, with the principal another transport would have established for that integration.
 */
async function session(t: Test, phiMode: PhiMode = 'phi', scopes = ALL_SCOPES) {
  const own = await buildTestApp({}, t);
  const http = await signIn(own, { phiMode, integration: { agencyId } });
  return { own, http, gateway: own.app.gateway, principal: testPrincipal(http.integration, phiMode, scopes) };
}

const requestIdOf = (res: { headers: Record<string, unknown> }) => String(res.headers['x-request-id']);

/** The metering and audit rows of a request id, without the fields that differ between two calls (time, duration). */
async function recorded(requestId: string) {
  const metering = await db
    .selectFrom('metering_events')
    .select(['agency_id', 'extension_id', 'operation_id', 'status', 'cost_units'])
    .where('request_id', '=', requestId)
    .execute();
  const audit = await db
    .selectFrom('audit_events')
    .select([
      'agency_id',
      'extension_id',
      'operation_id',
      'resource_type',
      'resource_ids',
      'outcome',
      'status',
      'phi_mode',
      'source_system',
      'external_reference_id',
    ])
    .where('request_id', '=', requestId)
    .execute();
  return { metering, audit };
}

t.test('getPatient through a direct call answers, meters and audits exactly as over HTTP', async (t) => {
  const { own, http, gateway, principal } = await session(t);
  const res = await http.request({ method: 'GET', url: `/api/v1/ext/patients/${patientId}` });
  t.equal(res.statusCode, 200);
  // The HTTP call's request id, kept by the direct call as an x-request-id would be: bodies and rows then compare whole.
  const requestId = requestIdOf(res);
  const direct = await callOperation(gateway, {
    operationId: 'getPatient',
    principal,
    params: { id: patientId },
    requestId,
  });
  t.equal(direct.status, 200);
  t.same(direct.body, res.json());
  t.match(direct.headers, {
    'x-request-id': requestId,
    'cache-control': 'no-store',
    'svc-extension-contract-version': res.headers['svc-extension-contract-version'],
    'ratelimit-policy': res.headers['ratelimit-policy'],
    ratelimit: /"minute";r=\d+;t=\d+/,
    'content-type': 'application/json; charset=utf-8',
  });

  await own.app.close();
  const { metering, audit } = await recorded(requestId);
  const { agencyId, extensionId } = http.integration;
  t.same(
    metering,
    Array(2).fill({
      agency_id: agencyId,
      extension_id: extensionId,
      operation_id: 'getPatient',
      status: 200,
      cost_units: operations.getPatient.costUnits,
    }),
  );
  const read = {
    agency_id: agencyId,
    extension_id: extensionId,
    operation_id: 'getPatient',
    resource_type: 'patient',
    resource_ids: [patientId],
    outcome: 'success',
    status: 200,
    phi_mode: 'phi',
  };
  t.same(audit, Array(2).fill({ ...read, source_system: null, external_reference_id: null }));
});

t.test(
  'a command through a direct call commits once per idempotency key and replays, across transports too',
  async (t) => {
    const { own, http, gateway, principal } = await session(t);
    const idempotencyKey = key();
    const create = (title: string) =>
      callOperation(gateway, { operationId: 'createTask', principal, idempotencyKey, body: { title } });
    const first = await create('Call the physician');
    t.equal(first.status, 200);
    t.notOk(first.headers['idempotent-replayed']);
    t.match(first.body, { data: { id: String, title: 'Call the physician', status: 'open' } });
    t.equal(first.headers.etag, `"${(first.body as { data: { version: number } }).data.version}"`);
    t.equal(first.refusal, undefined, 'an answer is no refusal');
    const again = await create('Call the physician');
    t.equal(again.headers['idempotent-replayed'], 'true');
    t.same(again.body, first.body);
    const overHttp = await http.request({
      method: 'POST',
      url: '/api/v1/ext/tasks',
      headers: { 'idempotency-key': idempotencyKey },
      payload: { title: 'Call the physician' },
    });
    t.equal(overHttp.headers['idempotent-replayed'], 'true', 'the same command over HTTP replays the direct call');
    t.same(overHttp.json(), first.body);
    const other = await create('Something else');
    t.equal(other.status, 409);
    t.match(other.body, {
      error: { code: 'PLATFORM_IDEMPOTENCY_CONFLICT', correlationId: other.headers['x-request-id'] },
    });
    const tasks = await db
      .selectFrom('tasks')
      .select('id')
      .where('agency_id', '=', agencyId)
      .where('created_by', '=', http.integration.extensionId)
      .execute();
    t.equal(tasks.length, 1, 'one row for the key');

    await own.app.close();
    const cost = async (result: { headers: Record<string, unknown> }) =>
      (await recorded(requestIdOf(result))).metering.map((m) => m.cost_units);
    t.same(await cost(first), [operations.createTask.costUnits]);
    t.same(await cost(again), [0], 'a replay costs nothing, as over HTTP');
    t.same(await cost(overHttp), [0]);
    t.match((await recorded(requestIdOf(first))).audit, [
      { operation_id: 'createTask', outcome: 'success', resource_ids: [tasks[0].id] },
    ]);
    t.match(
      (await recorded(requestIdOf(again))).audit,
      [{ operation_id: 'createTask', outcome: 'success' }],
      'a replay is audited',
    );
  },
);

t.test('refusals answer the contract error bodies of HTTP and are metered and audited as over HTTP', async (t) => {
  const { own, http, gateway, principal } = await session(t);
  const unknown = await http.request({ method: 'GET', url: '/api/v1/ext/patients/pat_does_not_exist' });
  const narrowToken = await issueTestToken(own, http.integration, 'phi', 'external:tasks:read');
  const narrow = await own.request({
    method: 'GET',
    url: `/api/v1/ext/patients/${patientId}`,
    headers: bearer(narrowToken),
  });
  const invalid = await http.request({ method: 'GET', url: '/api/v1/ext/patients?limit=0' });
  t.equal(unknown.statusCode, 404);
  t.equal(narrow.statusCode, 403);
  t.equal(invalid.statusCode, 400);

  const calls: [typeof unknown, Parameters<typeof callOperation<OperationId>>[1]][] = [
    [unknown, { operationId: 'getPatient', principal, params: { id: 'pat_does_not_exist' } }],
    [
      narrow,
      {
        operationId: 'getPatient',
        principal: { ...principal, scopes: new Set(['external:tasks:read']) },
        params: { id: patientId },
      },
    ],
    [invalid, { operationId: 'listPatients', principal, query: { limit: 0 } }],
  ];
  for (const [res, input] of calls) {
    const direct = await callOperation(gateway, { ...input, requestId: requestIdOf(res) });
    t.equal(direct.status, res.statusCode);
    t.same(direct.body, res.json(), `${res.statusCode}: the same body`);
    const code = res.json().error?.code ?? res.json().code;
    const entry = errorCodes.find((e) => e.code === code)!;
    t.same(direct.refusal?.code, code, `${res.statusCode}: the refusal read from either shape`);
    t.equal(direct.refusal?.retryable, entry.retryable, "retryable as the contract's error table says");
  }
  t.equal(unknown.json().error.code, 'PLATFORM_RESOURCE_NOT_FOUND');
  t.equal(narrow.json().error.code, 'PLATFORM_SCOPE_NOT_GRANTED');
  t.equal(invalid.json().code, 'PLATFORM_INVALID_REQUEST');

  await own.app.close();
  for (const [res, { operationId }] of calls) {
    const { metering, audit } = await recorded(requestIdOf(res));
    const status = res.statusCode;
    t.same(
      metering,
      Array(2).fill({
        agency_id: agencyId,
        extension_id: http.integration.extensionId,
        operation_id: operationId,
        status,
        cost_units: operations[operationId].costUnits,
      }),
    );
    t.equal(audit.length, 2, `${status}: audited twice`);
    t.same(audit[0], audit[1]);
    t.match(audit[0], { operation_id: operationId, status, outcome: status === 403 ? 'denied' : 'failure' });
  }
});

t.test('a no_phi principal gets the reduced answer of a no_phi token', async (t) => {
  const { http, gateway, principal } = await session(t, 'no_phi');
  const page = await http.request({ method: 'GET', url: '/api/v1/ext/patients?limit=5' });
  const handle = page.json().data[0].id;
  const res = await http.request({ method: 'GET', url: `/api/v1/ext/patients/${handle}` });
  const direct = await callOperation(gateway, {
    operationId: 'getPatient',
    principal,
    params: { id: handle },
    requestId: requestIdOf(res),
  });
  t.equal(direct.status, 200);
  t.same(direct.body, res.json());
  t.match(direct.body, { data: { id: /^PT-/, first_name: null, last_name: null, dob: null, phones: [] } });
  const real = await callOperation(gateway, { operationId: 'getPatient', principal, params: { id: patientId } });
  t.match(
    real,
    { status: 404, body: { error: { code: 'PLATFORM_PSEUDONYM_UNRESOLVED' } } },
    'a no_phi principal names patients by handle only',
  );
});

t.test(
  'an Authorization value is authenticated as over HTTP; the contract version is negotiated from the headers',
  async (t) => {
    const { http, gateway } = await session(t);
    const v1 = await http.request({
      method: 'GET',
      url: '/api/v1/ext/health',
      headers: { 'svc-contract-version': '1' },
    });
    const direct = await callOperation(gateway, {
      operationId: 'getHealth',
      authorization: `Bearer ${http.token}`,
      headers: { 'svc-contract-version': '1' },
      requestId: requestIdOf(v1),
    });
    t.equal(direct.status, 200);
    const { data } = direct.body as { data: Record<string, unknown> };
    t.same(Object.keys(data), Object.keys(v1.json().data), 'the version 1 shape (each answer has its own timestamp)');
    t.match(direct.headers, { 'svc-extension-contract-version': '1', deprecation: v1.headers.deprecation });
    const anonymous = await callOperation(gateway, { operationId: 'getHealth' });
    t.equal(anonymous.status, 401);
    t.match(anonymous, {
      headers: { 'www-authenticate': /^Bearer / },
      body: { code: 'PLATFORM_AUTHENTICATION_REQUIRED' },
    });
  },
);

t.test(
  "a principal is checked against its integration's current policy, and for expiry, as a remembered token is",
  async (t) => {
    const { http, gateway, principal } = await session(t);
    const expired = await callOperation(gateway, {
      operationId: 'getHealth',
      principal: { ...principal, expiresAt: new Date(Date.now() - 1) },
    });
    t.match(expired, { status: 401, body: { code: 'PLATFORM_TOKEN_EXPIRED' } });
    await setIntegrationStatus(db, http.integration.clientId, 'disabled');
    const disabled = await callOperation(gateway, { operationId: 'getHealth', principal });
    t.match(disabled, { status: 403, body: { error: { code: 'PLATFORM_EXTENSION_DISABLED' } } });
  },
);

t.test(
  'an unknown operation is a 404, and a closed gateway refuses direct calls as a closing server does',
  async (t) => {
    const { own, gateway, principal } = await session(t);
    const unknown = await callOperation(gateway, { operationId: 'dropEverything' as OperationId, principal });
    t.match(unknown, {
      status: 404,
      body: { code: 'PLATFORM_RESOURCE_NOT_FOUND', request_id: unknown.headers['x-request-id'] },
    });
    await own.app.close();
    const late = await callOperation(gateway, { operationId: 'getHealth', principal });
    t.match(late, {
      status: 503,
      headers: { 'retry-after': '1' },
      body: { error: { code: 'PLATFORM_SERVICE_UNAVAILABLE' } },
    });
  },
);
