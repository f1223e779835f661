import t from 'tap';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { startTracing } from '../../src/observability/tracing.js';
import { tracingExporter } from '../../src/observability/tracing-settings.js';
import { testDatabase } from '../helpers/database.js';
import { testKeyEncryption } from '../helpers/secrets.js';
import { bearer, createTestIntegration, issueTestToken } from '../helpers/identity.js';
import type { TestApi } from '../helpers/app.js';

const exporter = new InMemorySpanExporter();
const tracing = await startTracing({ exporter, batch: false });
const database = await testDatabase();
const app = await buildApp({ config: loadConfig({}), database, keyEncryption: testKeyEncryption, tracing });
t.teardown(async () => {
  await app.close();
  await tracing.shutdown();
});
const api: TestApi = { app, request: (options) => app.inject(options) };
const integration = await createTestIntegration(database.db);
const token = await issueTestToken(api, integration, 'phi');
const zip = '02108';

const CANARY = 'canary~';
const canary = (field: string) => `${CANARY}${field}`;

/** Every name and attribute of the spans, as one text: what an exporter would send. */
const exported = (spans: ReadableSpan[]) => JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status })));

const children = (spans: ReadableSpan[], parent: ReadableSpan) => spans.filter((s) => s.parentSpanContext?.spanId === parent.spanContext().spanId);

t.test('a call has a span per pipeline step and per statement, continuing the caller\'s traceparent, without PHI', async (t) => {
  exporter.reset();
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/ext/referrals',
    headers: { ...bearer(token), 'idempotency-key': `trace-${Date.now()}`, traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    payload: {
      service_line: 'hospice', patient_name: `${canary('first')} ${canary('last')}`, zip_code: zip, referral_type: canary('referral_type'),
      referral_source: canary('referral_source'), notes: canary('notes'),
    },
  });
  t.equal(created.statusCode, 200, created.body);
  const patientId: string = created.json().data.patient_id;
  const read = await app.inject({ method: 'GET', url: `/api/v1/ext/patients/${patientId}`, headers: bearer(token) });
  t.equal(read.statusCode, 200);
  t.ok(read.body.includes(canary('last')), 'the chart holds the canaries');
  const refused = await app.inject({ method: 'GET', url: `/api/v1/ext/patients/${canary('path_id')}`, headers: bearer(token) });
  t.equal(refused.statusCode, 400, 'a canary in the path is refused');
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/ext/patients/pat_0000000000000000', headers: bearer(token) })).statusCode, 404);

  const spans = exporter.getFinishedSpans();
  const [create] = spans.filter((s) => s.name === 'POST /api/v1/ext/referrals');
  t.ok(create, 'the command\'s span');
  t.equal(create.spanContext().traceId, traceId, 'continues the caller\'s trace');
  t.equal(create.parentSpanContext?.spanId, '00f067aa0ba902b7');
  t.match(create.attributes, { 'http.route': '/api/v1/ext/referrals', 'svc.operation_id': 'createReferral', 'http.response.status_code': 200, 'svc.agency_id': integration.agencyId, 'svc.phi_mode': 'phi' });
  const steps = children(spans, create).map((s) => s.name).sort();
  t.same(steps, ['gateway.authenticate', 'gateway.authorize', 'gateway.handler', 'gateway.limits'], 'the command\'s steps');
  const handler = children(spans, create).find((s) => s.name === 'gateway.handler')!;
  t.ok(children(spans, handler).filter((s) => s.name === 'db.query').length >= 3, 'its statements, under the handler');

  const get = spans.find((s) => s.name === 'GET /api/v1/ext/patients/{id}' && s.attributes['http.response.status_code'] === 200)!;
  t.same(children(spans, get).map((s) => s.name).sort(), ['gateway.audit', 'gateway.authenticate', 'gateway.authorize', 'gateway.handler', 'gateway.limits'], 'a PHI read is audited');
  const notFound = spans.find((s) => s.name === 'GET /api/v1/ext/patients/{id}' && s.attributes['http.response.status_code'] === 404)!;
  t.equal(notFound.attributes['error.type'], 'PLATFORM_RESOURCE_NOT_FOUND');

  t.notOk(exported(spans).includes(CANARY), 'no canary in any span');
  t.notOk(exported(spans).includes(patientId), 'nor the patient\'s id');
});

t.test('tracing is off unless the OTEL_* variables ask for it', async (t) => {
  t.equal(tracingExporter({}), undefined);
  t.equal(tracingExporter({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }), 'otlp');
  t.equal(tracingExporter({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' }), 'otlp');
  t.equal(tracingExporter({ OTEL_TRACES_EXPORTER: 'console' }), 'console');
  t.equal(tracingExporter({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }), undefined);
  t.equal(tracingExporter({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }), undefined);
  t.throws(() => tracingExporter({ OTEL_TRACES_EXPORTER: 'zipkin' }), /otlp, console or none/);
  t.throws(() => tracingExporter({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }), /http\/json/);
});
