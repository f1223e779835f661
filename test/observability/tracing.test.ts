import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { sql } from 'kysely';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { webhookCommands } from '../../src/admin/webhook.js';
import { startTracing } from '../../src/observability/tracing.js';
import { tracingExporter } from '../../src/observability/tracing-settings.js';
import { testDatabase } from '../helpers/database.js';
import { testKeyEncryption } from '../helpers/secrets.js';
import { bearer, createTestIntegration, issueTestToken } from '../helpers/identity.js';
import { buildTestApp, type TestApi } from '../helpers/app.js';
import { startReceiver, startWebhookWorker, type TestReceiver } from '../helpers/webhook-receiver.js';

const exporter = new InMemorySpanExporter();
const tracing = await startTracing({ exporter, batch: false });
const database = await testDatabase();
const { db } = database;
const config = loadConfig({});
// As buildTestApp's: webhook workers run where the tests below start them, and no call is shed on a loaded machine.
const app = await buildApp({
  config: { ...config, inProcessWorkers: [], pressure: { ...config.pressure, eventLoopDelayMs: 0 } },
  database,
  keyEncryption: testKeyEncryption,
  tracing,
});
t.teardown(async () => {
  await app.close();
  await tracing.shutdown();
});
const api: TestApi = { app, request: (options) => app.inject(options) };
const integration = await createTestIntegration(db);
const token = await issueTestToken(api, integration, 'phi');
const zip = '02108';

const CANARY = 'canary~';
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const canary = (field: string) => `${CANARY}${field}`;

/** Every name and attribute of the spans, as one text: what an exporter would send. */
const exported = (spans: ReadableSpan[]) =>
  JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status })));

const children = (spans: ReadableSpan[], parent: ReadableSpan) =>
  spans.filter((s) => s.parentSpanContext?.spanId === parent.spanContext().spanId);

t.test(
  "a call has a span per pipeline step and per statement, continuing the caller's traceparent, without PHI",
  async (t) => {
    exporter.reset();
    const created = await app.inject({
      method: 'POST',
      url: '/api/v1/ext/referrals',
      headers: {
        ...bearer(token),
        'idempotency-key': `trace-${Date.now()}`,
        traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01`,
      },
      payload: {
        service_line: 'hospice',
        patient_name: `${canary('first')} ${canary('last')}`,
        zip_code: zip,
        referral_type: canary('referral_type'),
        referral_source: canary('referral_source'),
        notes: canary('notes'),
      },
    });
    t.equal(created.statusCode, 200, created.body);
    const patientId: string = created.json().data.patient_id;
    const read = await app.inject({ method: 'GET', url: `/api/v1/ext/patients/${patientId}`, headers: bearer(token) });
    t.equal(read.statusCode, 200);
    t.ok(read.body.includes(canary('last')), 'the chart holds the canaries');
    const refused = await app.inject({
      method: 'GET',
      url: `/api/v1/ext/patients/${canary('path_id')}`,
      headers: bearer(token),
    });
    t.equal(refused.statusCode, 400, 'a canary in the path is refused');
    t.equal(
      (await app.inject({ method: 'GET', url: '/api/v1/ext/patients/pat_0000000000000000', headers: bearer(token) }))
        .statusCode,
      404,
    );

    const spans = exporter.getFinishedSpans();
    const [create] = spans.filter((s) => s.name === 'POST /api/v1/ext/referrals');
    t.ok(create, "the command's span");
    t.equal(create.spanContext().traceId, TRACE_ID, "continues the caller's trace");
    t.equal(create.parentSpanContext?.spanId, '00f067aa0ba902b7');
    t.match(create.attributes, {
      'http.route': '/api/v1/ext/referrals',
      'svc.operation_id': 'createReferral',
      'http.response.status_code': 200,
      'svc.agency_id': integration.agencyId,
      'svc.phi_mode': 'phi',
    });
    const steps = children(spans, create)
      .map((s) => s.name)
      .sort();
    t.same(
      steps,
      ['gateway.authenticate', 'gateway.authorize', 'gateway.handler', 'gateway.limits'],
      "the command's steps",
    );
    const handler = children(spans, create).find((s) => s.name === 'gateway.handler')!;
    t.ok(
      children(spans, handler).filter((s) => s.name === 'db.query').length >= 3,
      'its statements, under the handler',
    );

    const get = spans.find(
      (s) => s.name === 'GET /api/v1/ext/patients/{id}' && s.attributes['http.response.status_code'] === 200,
    )!;
    t.same(
      children(spans, get)
        .map((s) => s.name)
        .sort(),
      ['gateway.audit', 'gateway.authenticate', 'gateway.authorize', 'gateway.handler', 'gateway.limits'],
      'a PHI read is audited',
    );
    const notFound = spans.find(
      (s) => s.name === 'GET /api/v1/ext/patients/{id}' && s.attributes['http.response.status_code'] === 404,
    )!;
    t.equal(notFound.attributes['error.type'], 'PLATFORM_RESOURCE_NOT_FOUND');

    t.notOk(exported(spans).includes(CANARY), 'no canary in any span');
    t.notOk(exported(spans).includes(patientId), "nor the patient's id");
  },
);

t.test('tracing is off unless the OTEL_* variables ask for it', async (t) => {
  t.equal(tracingExporter({}), undefined);
  t.equal(tracingExporter({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }), 'otlp');
  t.equal(tracingExporter({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' }), 'otlp');
  t.equal(tracingExporter({ OTEL_TRACES_EXPORTER: 'console' }), 'console');
  t.equal(
    tracingExporter({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }),
    undefined,
  );
  t.equal(
    tracingExporter({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }),
    undefined,
  );
  t.throws(() => tracingExporter({ OTEL_TRACES_EXPORTER: 'zipkin' }), /otlp, console or none/);
  t.throws(
    () =>
      tracingExporter({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }),
    /http\/json/,
  );
});

const incoming = { traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01`, tracestate: 'acme=t61rcWkgMzE' };
// The same service with tracing off: its calls are not traced, so their events carry no trace.
const untracedApi = await buildTestApp();
const W3C = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

/** A fresh agency subscribed to task.created at `receiver` (the URL's query a canary): createTask through either app. */
async function subscribedAgency(receiver: TestReceiver) {
  const integration = await createTestIntegration(db);
  await webhookCommands.subscribe.run({
    db,
    config,
    keyEncryption: () => testKeyEncryption,
    options: {
      agency: integration.agencyId,
      url: `${receiver.url}?key=${CANARY}query`,
      events: 'task.created',
      'allow-http-loopback': true,
      'baa-signed': true,
      'phi-mode': 'phi',
    },
  });
  const token = await issueTestToken(api, integration, 'phi');
  return (via: TestApi, headers: Record<string, string> = {}) =>
    via.request({
      method: 'POST',
      url: '/api/v1/ext/tasks',
      headers: { ...bearer(token), 'idempotency-key': `tr-${Math.random()}`, ...headers },
      payload: { title: `${CANARY}title` },
    });
}

const deliverySpans = (deliveryId: string) =>
  exporter
    .getFinishedSpans()
    .filter((s) => s.name === 'webhook.delivery' && s.attributes['svc.delivery_id'] === deliveryId);

async function spansOf(deliveryId: string, count: number): Promise<ReadableSpan[]> {
  const deadline = Date.now() + 10_000;
  while (deliverySpans(deliveryId).length < count) {
    if (Date.now() > deadline)
      throw new Error(`${deliverySpans(deliveryId).length} of ${count} delivery spans exported`);
    await sleep(10);
  }
  return deliverySpans(deliveryId).sort(
    (a, b) => Number(a.attributes['svc.delivery_attempt']) - Number(b.attributes['svc.delivery_attempt']),
  );
}

const eventTrace = (taskId: string) =>
  db
    .selectFrom('webhook_events')
    .select(['traceparent', 'tracestate'])
    .where(sql`data->>'id'`, '=', taskId)
    .executeTakeFirstOrThrow();

function traceparentOf(t: Test, header: string | string[] | undefined): { traceId: string; spanId: string } {
  const match = W3C.exec(String(header));
  t.ok(match, `a W3C traceparent: ${header}`);
  return { traceId: match?.[1] ?? '', spanId: match?.[2] ?? '' };
}

t.test(
  'each delivery attempt is a CLIENT span, child of the span of the call that emitted the event, and the receiver gets its traceparent',
  async (t) => {
    const receiver = await startReceiver(t, (_id, nth) => (nth === 1 ? 503 : 204));
    const createTask = await subscribedAgency(receiver);
    startWebhookWorker(t, db, {}, { deliveryTracer: tracing.deliveries });
    const created = await createTask(api, incoming);
    t.equal(created.statusCode, 200, created.body);
    t.match(
      await eventTrace(created.json().data.id),
      { traceparent: W3C, tracestate: incoming.tracestate },
      "the event keeps the call's trace context",
    );

    const [first, second] = await receiver.waitFor(2);
    const deliveryId = String(first.headers['x-svc-delivery-id']);
    t.equal(second.headers['x-svc-delivery-id'], deliveryId, 'the retry of the same delivery');
    const [firstSpan, secondSpan] = await spansOf(deliveryId, 2);
    const call = exporter
      .getFinishedSpans()
      .find((s) => s.name === 'POST /api/v1/ext/tasks' && s.spanContext().traceId === TRACE_ID);
    t.ok(call, "the command's span, in the caller's trace");

    const headers = [first, second].map((request) => traceparentOf(t, request.headers.traceparent));
    t.same(
      headers.map((h) => h.traceId),
      [TRACE_ID, TRACE_ID],
      "both attempts continue the caller's trace",
    );
    t.not(headers[0].spanId, headers[1].spanId, 'each attempt has a span id of its own');
    t.same(
      [first, second].map((r) => r.headers.tracestate),
      [incoming.tracestate, incoming.tracestate],
      "the trace's tracestate goes along",
    );
    for (const [i, span] of [firstSpan, secondSpan].entries()) {
      t.equal(span.kind, SpanKind.CLIENT);
      t.equal(span.spanContext().traceId, TRACE_ID);
      t.equal(span.spanContext().spanId, headers[i].spanId, "the header names the attempt's span");
      t.equal(
        span.parentSpanContext?.spanId,
        call!.spanContext().spanId,
        "a child of the call's span (not of a step's)",
      );
    }
    t.match(firstSpan.attributes, {
      'svc.event_type': 'task.created',
      'svc.delivery_id': deliveryId,
      'svc.delivery_attempt': 1,
      'http.response.status_code': 503,
      'error.type': '503',
    });
    t.match(secondSpan.attributes, { 'svc.delivery_attempt': 2, 'http.response.status_code': 204 });
    t.notOk('error.type' in secondSpan.attributes, 'a success has no error type');
    t.notOk(exported([firstSpan, secondSpan]).includes(CANARY), "neither the payload nor the URL's query in the spans");
    t.notOk(exported([firstSpan, secondSpan]).includes(created.json().data.id), "nor the task's id");
  },
);

t.test('a call without a traceparent starts the trace its deliveries continue', async (t) => {
  const receiver = await startReceiver(t);
  const createTask = await subscribedAgency(receiver);
  startWebhookWorker(t, db, {}, { deliveryTracer: tracing.deliveries });
  t.equal((await createTask(api)).statusCode, 200);
  const [delivery] = await receiver.waitFor(1);
  const [span] = await spansOf(String(delivery.headers['x-svc-delivery-id']), 1);
  const call = exporter.getFinishedSpans().find((s) => s.spanContext().spanId === span.parentSpanContext?.spanId);
  t.match(call, { name: 'POST /api/v1/ext/tasks', parentSpanContext: undefined }, "the call's span is the root");
  t.equal(traceparentOf(t, delivery.headers.traceparent).traceId, call!.spanContext().traceId);
  t.notOk(delivery.headers.tracestate, 'no tracestate when the trace has none');
});

t.test('a call its caller did not sample records no span, and its event continues the trace unsampled', async (t) => {
  const receiver = await startReceiver(t);
  const createTask = await subscribedAgency(receiver);
  exporter.reset();
  const unsampled = { traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-00` };
  const created = await createTask(api, unsampled);
  t.equal(created.statusCode, 200, created.body);
  t.same(
    exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === TRACE_ID),
    [],
    'no span of the call, its steps or its statements',
  );
  const { traceparent } = await eventTrace(created.json().data.id);
  t.match(traceparent, new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-00$`), 'the same trace, still unsampled');
  startWebhookWorker(t, db, {}, { deliveryTracer: tracing.deliveries });
  const [delivery] = await receiver.waitFor(1);
  t.match(delivery.headers.traceparent, new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-00$`), 'the receiver gets it too');
  t.same(deliverySpans(String(delivery.headers['x-svc-delivery-id'])), [], 'and its delivery records none either');
});

t.test('with tracing off, deliveries carry no traceparent', async (t) => {
  const receiver = await startReceiver(t);
  const createTask = await subscribedAgency(receiver);
  t.test('a call untraced: its event has no trace, even for a worker that traces', async (t) => {
    startWebhookWorker(t, db, {}, { deliveryTracer: tracing.deliveries });
    const created = await createTask(untracedApi, incoming);
    t.equal(created.statusCode, 200);
    t.same(await eventTrace(created.json().data.id), { traceparent: null, tracestate: null });
    const [delivery] = await receiver.waitFor(1);
    t.notOk(delivery.headers.traceparent);
    t.notOk(delivery.headers.tracestate);
    t.same(deliverySpans(String(delivery.headers['x-svc-delivery-id'])), [], 'and no span');
  });
  t.test('a worker untraced: an event with a trace is delivered without it', async (t) => {
    startWebhookWorker(t, db);
    const created = await createTask(api, incoming);
    t.match(await eventTrace(created.json().data.id), { traceparent: W3C });
    const [, delivery] = await receiver.waitFor(2);
    t.notOk(delivery.headers.traceparent);
    t.notOk(delivery.headers.tracestate);
  });
});
