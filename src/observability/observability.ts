import { ServiceMetrics, type ObservedDatabase } from './metrics.js';
import { PressureMonitor, type PressureThresholds } from './pressure.js';
import type { Tracing } from './call-trace.js';

/** What one app watches itself with: its metrics (when on), its load-shedding monitor, its tracer (when tracing is on). */
export interface Observability {
  metrics: ServiceMetrics | undefined;
  pressure: PressureMonitor;
  tracing: Tracing | undefined;
  /** Stops the monitor and stops watching the database (which may outlive the app: tests share one). */
  close(): void;
}

export function observe(
  settings: { metrics: boolean; pressure: PressureThresholds },
  database: ObservedDatabase,
  tracing?: Tracing,
): Observability {
  const metrics = settings.metrics ? new ServiceMetrics() : undefined;
  const pressure = new PressureMonitor(settings.pressure);
  const unwatch = [
    database.observe({ connectionWait: (waitMs) => pressure.connectionWait(waitMs) }),
    ...(metrics ? [metrics.database(database)] : []),
    ...(tracing ? [tracing.watch(database)] : []),
  ];
  if (metrics) watchPressure(metrics, pressure);
  pressure.start();
  return {
    metrics,
    pressure,
    tracing,
    close() {
      pressure.stop();
      for (const stop of unwatch) stop();
    },
  };
}

function watchPressure(metrics: ServiceMetrics, pressure: PressureMonitor): void {
  metrics.registrar.gauge({
    name: 'extension_api_load_shedding',
    help: '1 while the partition refuses calls with 503 because a pressure signal is past its threshold, else 0.',
    collect() {
      this.set(pressure.shedding ? 1 : 0);
    },
  });
  metrics.registrar.gauge({
    name: 'extension_api_pressure',
    help: 'The load-shedding signals of the last sample window: event-loop delay (ms), heap used (% of the limit), mean wait for a database connection (ms).',
    labelNames: ['signal'],
    collect() {
      const { readings } = pressure.report();
      this.set({ signal: 'event_loop_delay_ms' }, readings.eventLoopDelayMs);
      this.set({ signal: 'heap_used_percent' }, readings.heapUsedPercent);
      this.set({ signal: 'pool_wait_ms' }, readings.poolWaitMs);
    },
  });
}
