import t from 'tap';
import { contractVersions, operations, type OperationDefinition } from '../../../src/generated/contract.js';
import { isEnabled, unsupported } from '../../../src/resources/handler.js';
import { buildSignedInApp } from '../../helpers/app.js';

const api = await buildSignedInApp();
const all = Object.values(operations) as OperationDefinition[];

t.test('health', async (t) => {
  const res = await api.request({ method: 'GET', url: '/api/v1/ext/health' });
  t.equal(res.statusCode, 200);
  t.match(res.json().data, { status: 'ok', version: String });
});

t.test("health's timestamp is the instant of the call, to the millisecond", async (t) => {
  for (let call = 0; call < 3; call++) {
    const before = Date.now();
    const res = await api.request({ method: 'GET', url: '/api/v1/ext/health' });
    const after = Date.now();
    const timestamp = Date.parse(res.json().data.timestamp);
    t.ok(timestamp >= before && timestamp <= after, `${res.json().data.timestamp} within the call`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
});

t.test('the catalog is derived from the document', async (t) => {
  const res = await api.request({ method: 'GET', url: '/api/v1/ext/catalog' });
  t.equal(res.statusCode, 200);
  const { data, warnings } = res.json();
  t.equal(data.routes.length, all.length);
  const orders = data.routes.find((r: { operation_id: string }) => r.operation_id === 'listPhysicianOrders');
  t.match(orders, {
    method: 'GET',
    path: '/api/v1/ext/physician-orders',
    scope: 'external:physician-orders:read',
    no_phi: 'pseudonymized',
    no_phi_usable: true,
    command: false,
  });
  t.same(
    orders.query_parameters.map((p: { name: string }) => p.name),
    [
      'limit',
      'offset',
      'cursor',
      'status',
      'order_type',
      'aging_bucket',
      'sla_breached',
      'physician_id',
      'patient_id',
      'as_of',
    ],
  );
  t.match(orders.query_parameters[0], { name: 'limit', type: 'integer', default: 50, maximum: 200 });
  const collections = data.routes.find((r: { operation_id: string }) => r.operation_id === 'listWorkingCollections');
  t.match(collections, { no_phi: 'denied', no_phi_usable: false, scope: 'external:working-collections:read' });
  t.match(data.contract_versions, [
    { version: '1', manifest_version: contractVersions[0].manifest_version, status: 'deprecated', successor: '2' },
    { version: '2', manifest_version: contractVersions[1].manifest_version, status: 'current' },
  ]);
  t.equal(data.webhook_envelope_version, '2026-06-27');
  t.match(
    data.mcp,
    {
      endpoint: /\/api\/v1\/mcp$/,
      protected_resource_metadata: /\/\.well-known\/oauth-protected-resource\/api\/v1\/mcp$/,
      authorization_server_metadata: /\/\.well-known\/oauth-authorization-server$/,
      scopes_required: ['mcp:tools', 'no_phi'],
    },
    'the MCP surface for people, beside the partition',
  );
  t.same(
    data.mcp.tools.filter((tool: { read_only: boolean }) => !tool.read_only).map((tool: { name: string }) => tool.name),
    ['braes.proposals.create'],
    'every tool reads but the proposal',
  );
  t.notOk(
    data.mcp.tools.some((tool: { name: string }) => /approve|reject|decide/.test(tool.name)),
    'no decision tool',
  );
  const referralCreate = data.capabilities.find((c: { id: string }) => c.id === 'referrals.create');
  t.same(referralCreate, {
    id: 'referrals.create',
    description: referralCreate.description,
    command: true,
    operations: ['createReferral'],
  });
  const enabled = data.routes
    .filter((r: { enabled: boolean }) => r.enabled)
    .map((r: { operation_id: string }) => r.operation_id)
    .sort();
  t.same(enabled, [
    'createQueryToken',
    'createReferral',
    'createTask',
    'getCatalog',
    'getHealth',
    'getHhvbpSummary',
    'getIntake',
    'getPatient',
    'getPhysicianOrder',
    'getQueryTokenExcelTemplate',
    'getReferral',
    'getTask',
    'getVisit',
    'issueToken',
    'listHhvbpMeasures',
    'listIntakes',
    'listPatients',
    'listPhysicianOrders',
    'listQueryTokens',
    'listReferrals',
    'listRemittanceAllocations',
    'listRemittances',
    'listVisits',
    'listWorkingCollectionRows',
    'listWorkingCollections',
    'revokeQueryToken',
    'runQuery',
    'updateTask',
  ]);
  t.same(warnings, [], 'every operation is enabled and the governed queries are approved');
});

t.test(
  'an operation a deployment does not enable answers the documented PLATFORM_UNSUPPORTED_OPERATION, and the catalog says so',
  async (t) => {
    const catalog = (await api.request({ method: 'GET', url: '/api/v1/ext/catalog' })).json().data;
    t.same(
      catalog.routes.filter((r: { enabled: boolean }) => !r.enabled),
      [],
      'every operation is built and enabled here',
    );
    const handler = unsupported('listRemittances');
    t.notOk(isEnabled(handler));
    t.ok(isEnabled(async () => ({ data: [] })));
    await t.rejects(async () => handler({} as never), {
      code: 'PLATFORM_UNSUPPORTED_OPERATION',
      details: { operation_id: 'listRemittances' },
    });
  },
);

t.test('every response carries a request id, and a well-formed caller id is kept', async (t) => {
  const mine = await api.request({
    method: 'GET',
    url: '/api/v1/ext/health',
    headers: { 'x-request-id': 'trace-abc-123' },
  });
  t.equal(mine.headers['x-request-id'], 'trace-abc-123');
  const bad = await api.request({
    method: 'GET',
    url: '/api/v1/ext/health',
    headers: { 'x-request-id': 'bad id\u0007' },
  });
  t.match(bad.headers['x-request-id'], /^req_[A-Za-z0-9_-]{12}\.[0-9a-z]+$/);
  const minted = await Promise.all(
    Array.from({ length: 20 }, () => api.request({ method: 'GET', url: '/api/v1/ext/health' })),
  );
  t.equal(new Set(minted.map((res) => res.headers['x-request-id'])).size, 20, 'each minted id is new');
});

t.test('liveness and readiness probes sit outside the partition', async (t) => {
  t.same((await api.request({ method: 'GET', url: '/livez' })).json(), { status: 'ok' });
  t.match((await api.request({ method: 'GET', url: '/readyz' })).json(), { status: 'ok', database: /pglite|postgres/ });
});
