import t from 'tap';
import { buildSignedInApp, buildTestApp } from '../helpers/app.js';
import { testDatabase } from '../helpers/database.js';
import { tokenRequestBody } from '../helpers/identity.js';
import { until } from '../helpers/until.js';
import { parsePrometheusText, sampleValue } from '../helpers/prometheus-text.js';
import { serveMetrics } from '../../src/observability/metrics-server.js';
import { ServiceMetrics, statementLabel } from '../../src/observability/metrics.js';

// Test apps start no background worker unless asked: this one runs housekeeping, whose metrics are checked below.
const api = await buildSignedInApp({ config: { inProcessWorkers: ['housekeeping'] } });
const { agencyId } = api.integration;
const agencyName = (
  await (
    await testDatabase()
  ).db
    .selectFrom('agencies')
    .select('name')
    .where('id', '=', agencyId)
    .executeTakeFirstOrThrow()
).name;

async function scrape() {
  // No token: the metrics are outside the partition.
  const res = await api.app.inject({ method: 'GET', url: '/metrics' });
  t.equal(res.statusCode, 200);
  t.match(res.headers['content-type'], /^text\/plain; version=0\.0\.4/);
  return { text: res.body, samples: parsePrometheusText(res.body) };
}

const health = { operation: 'getHealth', status_class: '2xx', contract_version: '2' };

t.test('/metrics parses as Prometheus text and its counters move with requests', async (t) => {
  const before = (await scrape()).samples;
  for (let i = 0; i < 3; i++)
    t.equal((await api.request({ method: 'GET', url: '/api/v1/ext/health' })).statusCode, 200);
  t.equal(
    (await api.request({ method: 'GET', url: '/api/v1/ext/health', headers: { 'svc-contract-version': '1' } }))
      .statusCode,
    200,
  );
  t.equal(
    (await api.request({ method: 'GET', url: '/api/v1/ext/health', headers: { authorization: 'Bearer nonsense' } }))
      .statusCode,
    401,
  );
  t.equal(
    (await api.request({ method: 'GET', url: '/api/v1/ext/health', headers: { 'svc-contract-version': '9' } }))
      .statusCode,
    400,
  );
  const task = {
    method: 'POST' as const,
    url: '/api/v1/ext/tasks',
    headers: { 'idempotency-key': `metrics-${Date.now()}` },
    payload: { title: 'Call back', priority: 'normal' },
  };
  t.equal((await api.request(task)).statusCode, 200);
  t.equal((await api.request(task)).headers['idempotent-replayed'], 'true');
  const conflict = await api.request({ ...task, payload: { title: 'Another title', priority: 'normal' } });
  t.equal(conflict.statusCode, 409, conflict.body);
  t.equal(
    (
      await api.app.inject({
        method: 'POST',
        url: '/api/v1/oauth/token',
        payload: tokenRequestBody(api.integration, 'phi'),
      })
    ).statusCode,
    200,
  );
  t.equal(
    (
      await api.app.inject({
        method: 'POST',
        url: '/api/v1/oauth/token',
        payload: tokenRequestBody(api.integration, 'phi', { client_secret: 'wrong' }),
      })
    ).statusCode,
    401,
  );

  const { text, samples: after } = await scrape();
  const moved = (name: string, labels: Record<string, string>) =>
    sampleValue(after, name, labels) - sampleValue(before, name, labels);
  t.equal(moved('extension_api_requests_total', health), 3, 'three health calls in version 2');
  t.equal(moved('extension_api_requests_total', { ...health, contract_version: '1' }), 1, 'one in version 1');
  t.equal(
    moved('extension_api_requests_total', { operation: 'getHealth', status_class: '4xx', contract_version: 'none' }),
    1,
    'the unknown version, refused before one was read',
  );
  t.equal(
    moved('extension_api_requests_total', { operation: 'getHealth', status_class: '4xx', contract_version: '2' }),
    1,
    'the bad token',
  );
  t.equal(moved('extension_api_refusals_total', { operation: 'getHealth', code: 'PLATFORM_INVALID_CREDENTIAL' }), 1);
  t.equal(moved('extension_api_refusals_total', { operation: 'getHealth', code: 'PLATFORM_INVALID_REQUEST' }), 1);
  t.equal(moved('extension_api_request_duration_seconds_count', { operation: 'getHealth' }), 6);
  t.equal(
    moved('extension_api_request_duration_seconds_bucket', { operation: 'getHealth', le: '+Inf' }),
    6,
    'the +Inf bucket counts every call',
  );
  t.ok(sampleValue(after, 'extension_api_request_duration_seconds_sum', { operation: 'getHealth' }) > 0);
  t.equal(moved('extension_api_idempotency_total', { operation: 'createTask', outcome: 'executed' }), 1);
  t.equal(moved('extension_api_idempotency_total', { operation: 'createTask', outcome: 'replayed' }), 1);
  t.equal(moved('extension_api_idempotency_total', { operation: 'createTask', outcome: 'conflict' }), 1);
  t.equal(moved('extension_api_tokens_issued_total', { phi_mode: 'phi' }), 1);
  t.equal(moved('extension_api_token_failures_total', { code: 'PLATFORM_INVALID_CREDENTIAL' }), 1);
  t.ok(moved('extension_api_db_query_duration_seconds_count', { statement: 'select' }) > 0, 'statements are timed');
  t.ok(
    after.some((s) => s.name === 'process_cpu_user_seconds_total'),
    'process metrics',
  );
  t.ok(
    after.some((s) => s.name === 'extension_api_buffer_pending_events' && s.labels.buffer === 'metering'),
    'buffer depth',
  );
  t.equal(sampleValue(after, 'extension_api_load_shedding'), 0);
  t.ok(
    after.some((s) => s.name === 'extension_api_webhook_deliveries_waiting' && s.labels.state === 'due'),
    "the webhook outbox's depth, from the database",
  );
  t.notOk(text.includes(agencyId) || text.includes(agencyName), 'no agency id or name');
  t.notOk(text.includes(api.integration.clientId), 'no client id');
});

t.test('the buffers report their writes and the workers their runs', async (t) => {
  await api.request({ method: 'GET', url: '/api/v1/ext/health' });
  // The flushers run every second.
  let samples: ReturnType<typeof parsePrometheusText> = [];
  await until(
    'the metering and audit flushers have run after this call',
    async () => {
      ({ samples } = await scrape());
      return (
        sampleValue(samples, 'extension_api_buffer_written_events_total', { buffer: 'metering' }) > 0 &&
        sampleValue(samples, 'extension_api_worker_last_success_timestamp_seconds', { worker: 'audit-flush' }) > 0
      );
    },
    30_000,
    100,
  );
  t.ok(
    sampleValue(samples, 'extension_api_buffer_written_events_total', { buffer: 'metering' }) > 0,
    'metering rows written',
  );
  t.ok(
    sampleValue(samples, 'extension_api_buffer_flush_duration_seconds_count', { buffer: 'metering' }) > 0,
    'flushes timed',
  );
  t.ok(
    sampleValue(samples, 'extension_api_worker_runs_total', { worker: 'metering-flush', outcome: 'ok' }) > 0,
    'flusher runs',
  );
  t.ok(
    sampleValue(samples, 'extension_api_worker_last_success_timestamp_seconds', { worker: 'audit-flush' }) >
      Date.now() / 1000 - 60,
  );
  t.equal(sampleValue(samples, 'extension_api_worker_interval_seconds', { worker: 'housekeeping' }), 3600);
  const pool = samples.filter((s) => s.name === 'extension_api_db_pool_connections');
  t.equal(pool.length > 0, (await testDatabase()).engine === 'postgres', 'pool gauges on PostgreSQL only');
});

t.test('METRICS=off: no /metrics', async (t) => {
  const off = await buildTestApp({ metrics: { enabled: false, port: undefined } }, t);
  t.equal((await off.app.inject({ method: 'GET', url: '/metrics' })).statusCode, 404);
  t.equal(off.app.observability.metrics, undefined);
});

t.test("METRICS_PORT: /metrics on its own port, not on the API's", async (t) => {
  const own = await buildTestApp({ metrics: { enabled: true, port: 1 } }, t);
  t.equal((await own.app.inject({ method: 'GET', url: '/metrics' })).statusCode, 404);
  const server = await serveMetrics(own.app.observability.metrics!, '127.0.0.1', 0);
  t.teardown(() => server.close());
  const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
  t.equal(res.status, 200);
  t.ok(parsePrometheusText(await res.text()).length > 0);
  t.equal((await fetch(`http://127.0.0.1:${server.port}/api/v1/ext/health`)).status, 404);
});

t.test("statement labels are bounded: a prepared statement's name or the first keyword", async (t) => {
  t.equal(
    statementLabel('/* prepared:patient-by-id-AbCdEf012345 */ select * from patients where id = $1'),
    'patient-by-id',
  );
  t.equal(statementLabel('  SELECT 1'), 'select');
  t.equal(statementLabel('insert into audit_events values ($1)'), 'insert');
  t.equal(statementLabel('vacuum analyze'), 'other');
});

t.test('a worker registers its own metrics through the registrar, once per name', async (t) => {
  const metrics = new ServiceMetrics();
  const depth = metrics.registrar.gauge({
    name: 'extension_api_outbox_pending_events',
    help: 'Events waiting for delivery.',
  });
  t.equal(
    metrics.registrar.gauge({ name: 'extension_api_outbox_pending_events', help: 'Events waiting for delivery.' }),
    depth,
    'the same gauge again',
  );
  depth.set(7);
  t.equal(sampleValue(parsePrometheusText(await metrics.text()), 'extension_api_outbox_pending_events'), 7);
  t.throws(() => metrics.registrar.counter({ name: 'outbox_total', help: 'x' }), /must be named extension_api_/);
});
