import t from 'tap';
import { loadConfig } from '../../src/config.js';

t.test('metrics are on by default, on the main port', async (t) => {
  t.same(loadConfig({}).metrics, { enabled: true, port: undefined });
  t.same(loadConfig({ METRICS: 'off', METRICS_PORT: '9464' }).metrics, { enabled: false, port: 9464 });
  t.throws(() => loadConfig({ METRICS: 'yes' }), /METRICS must be on or off/);
  t.throws(() => loadConfig({ METRICS_PORT: '70000' }), /METRICS_PORT must be a port number/);
  t.throws(() => loadConfig({ METRICS_PORT: '0' }), /METRICS_PORT must be an integer >= 1/);
});

t.test('load-shedding thresholds: documented defaults, 0 turns a signal off', async (t) => {
  t.same(loadConfig({}).pressure, {
    eventLoopDelayMs: 200,
    heapUsedPercent: 90,
    poolWaitMs: 1_000,
    sampleIntervalMs: 1_000,
    retryAfterSeconds: 2,
  });
  t.match(
    loadConfig({
      SHED_EVENT_LOOP_DELAY_MS: '0',
      SHED_HEAP_USED_PERCENT: '0',
      SHED_POOL_WAIT_MS: '250',
      SHED_RETRY_AFTER_SECONDS: '5',
    }).pressure,
    {
      eventLoopDelayMs: 0,
      heapUsedPercent: 0,
      poolWaitMs: 250,
      retryAfterSeconds: 5,
    },
  );
  t.throws(() => loadConfig({ SHED_HEAP_USED_PERCENT: '101' }), /at most 100/);
  t.throws(() => loadConfig({ SHED_RETRY_AFTER_SECONDS: '0' }), /SHED_RETRY_AFTER_SECONDS must be an integer >= 1/);
});

t.test('tracing is off unless OTEL_* ask for it', async (t) => {
  t.equal(loadConfig({}).tracing, undefined);
  t.equal(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }).tracing, 'otlp');
});
