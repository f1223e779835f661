import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildSignedInApp } from '../helpers/app.js';
import { until } from '../helpers/until.js';
import { PressureMonitor, type PressureThresholds } from '../../src/observability/pressure.js';

const thresholds: PressureThresholds = {
  eventLoopDelayMs: 50,
  heapUsedPercent: 0,
  poolWaitMs: 0,
  sampleIntervalMs: 60_000,
  retryAfterSeconds: 3,
};

/** Keeps the event loop busy, as a stuck handler or a too heavy load would. */
function blockEventLoop(ms: number) {
  for (const until = performance.now() + ms; performance.now() < until; );
}

/**
 * A window with the loop blocked. The delay monitor's timer records the time between its runs, from its second run
 * after a reset; it records the block once it runs again.
 */
async function stalledWindow(monitor: PressureMonitor) {
  monitor.sample();
  await sleep(30);
  blockEventLoop(400);
  await sleep(15);
  monitor.sample();
}

/** Samples until a window passes under the thresholds: on a loaded machine one window may still be over. */
function recovered(monitor: PressureMonitor) {
  return until('a window under the thresholds', async () => {
    monitor.sample();
    return !monitor.shedding;
  });
}

t.test('the monitor sheds past a threshold and recovers below it; 0 turns a signal off', async (t) => {
  const monitor = new PressureMonitor({ ...thresholds, poolWaitMs: 100 });
  monitor.decide({ eventLoopDelayMs: 10, heapUsedPercent: 95, poolWaitMs: 20 });
  t.equal(monitor.shedding, false, 'heap is off (0)');
  monitor.decide({ eventLoopDelayMs: 10, heapUsedPercent: 50, poolWaitMs: 150 });
  t.same(monitor.report().over, ['poolWaitMs']);
  t.equal(monitor.shedding, true);
  monitor.connectionWait(400);
  monitor.connectionWait(0);
  monitor.sample();
  t.equal(monitor.report().readings.poolWaitMs, 200, 'the mean wait of the window');
  monitor.sample();
  t.equal(monitor.report().readings.poolWaitMs, 0, 'no wait in a window without connections');
  t.equal(monitor.shedding, false);

  monitor.start();
  t.teardown(() => monitor.stop());
  await stalledWindow(monitor);
  t.ok(
    monitor.report().readings.eventLoopDelayMs > 50,
    `a blocked loop is measured (${monitor.report().readings.eventLoopDelayMs} ms)`,
  );
  t.same(monitor.report().over, ['eventLoopDelayMs']);
  await recovered(monitor);
  t.equal(monitor.shedding, false, 'recovers once the loop runs freely');
});

t.test(
  'under pressure the partition answers 503 with Retry-After; /livez stays up, /readyz reports it; then it recovers',
  async (t) => {
    const api = await buildSignedInApp({ config: { pressure: thresholds } });
    const pressure = api.app.observability.pressure;
    const health = () => api.request({ method: 'GET', url: '/api/v1/ext/health' });
    t.equal((await health()).statusCode, 200);

    await stalledWindow(pressure);
    t.equal(pressure.shedding, true);
    const shed = await health();
    t.equal(shed.statusCode, 503);
    t.equal(shed.headers['retry-after'], '3');
    t.equal(shed.json().error.code, 'PLATFORM_SERVICE_UNAVAILABLE');
    t.equal(shed.json().error.retryable, true);
    const token = await api.app.inject({ method: 'POST', url: '/api/v1/oauth/token', payload: {} });
    t.equal(token.statusCode, 503, 'the token endpoint sheds too, before any secret is hashed');
    t.equal((await api.app.inject({ method: 'GET', url: '/livez' })).statusCode, 200, 'liveness stays up');
    const ready = await api.app.inject({ method: 'GET', url: '/readyz' });
    t.equal(ready.statusCode, 503);
    t.equal(ready.headers['retry-after'], '3');
    t.match(ready.json(), {
      status: 'overloaded',
      pressure: { shedding: true, over: ['eventLoopDelayMs'], thresholds: { eventLoopDelayMs: 50 } },
    });
    const metrics = await api.app.inject({ method: 'GET', url: '/metrics' });
    t.match(metrics.body, /^extension_api_load_shedding 1$/m);
    t.match(
      metrics.body,
      /^extension_api_refusals_total\{operation="getHealth",code="PLATFORM_SERVICE_UNAVAILABLE"\} 1$/m,
    );

    await recovered(pressure);
    t.equal((await health()).statusCode, 200, 'recovered');
    const readyAgain = await api.app.inject({ method: 'GET', url: '/readyz' });
    t.equal(readyAgain.statusCode, 200);
    t.match(readyAgain.json(), { status: 'ok', pressure: { shedding: false, over: [] } });
  },
);
