import type { MetricsRegistrar } from '../observability/metrics.js';
import type { Worker, WorkerContext } from './worker.js';

interface PeriodicTask {
  name: string;
  intervalMs: number;
  /** One run; a failure is logged and the next interval runs it again. */
  run(ctx: WorkerContext): Promise<void>;
  /** After the last run, when the worker stops: e.g. a buffer's final write. */
  drain?(): Promise<void>;
}

/**
 * A task run every interval, never two runs at once: a tick that finds the previous run still going is skipped.
 * Its timer is unref'd, so it never holds a process open; stop() waits for the run in flight, then drains.
 */
export function periodic(task: PeriodicTask): Worker {
  return new PeriodicWorker(task);
}

/** Liveness of a periodic worker: its runs by outcome, its last success, its interval (alert on their gap). */
function runMetrics(metrics: MetricsRegistrar, task: PeriodicTask) {
  const worker = task.name;
  metrics
    .gauge({
      name: 'extension_api_worker_interval_seconds',
      help: 'How often a periodic worker runs.',
      labelNames: ['worker'],
    })
    .set({ worker }, task.intervalMs / 1000);
  const runs = metrics.counter({
    name: 'extension_api_worker_runs_total',
    help: 'Runs of a periodic worker, by outcome (ok, failed).',
    labelNames: ['worker', 'outcome'],
  });
  const lastSuccess = metrics.gauge({
    name: 'extension_api_worker_last_success_timestamp_seconds',
    help: 'When a periodic worker last finished a run without failing (Unix time).',
    labelNames: ['worker'],
  });
  return (ok: boolean) => {
    runs.inc({ worker, outcome: ok ? 'ok' : 'failed' });
    if (ok) lastSuccess.set({ worker }, Date.now() / 1000);
  };
}

class PeriodicWorker implements Worker {
  readonly #task: PeriodicTask;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #ran: ((ok: boolean) => void) | undefined;

  constructor(task: PeriodicTask) {
    this.#task = task;
  }

  get name(): string {
    return this.#task.name;
  }

  start(ctx: WorkerContext): void {
    if (this.#timer) throw new Error(`worker ${this.name} was already started`);
    if (ctx.metrics) this.#ran = runMetrics(ctx.metrics, this.#task);
    this.#timer = setInterval(() => {
      this.#running ??= this.#run(ctx).finally(() => {
        this.#running = undefined;
      });
    }, this.#task.intervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#running;
    await this.#task.drain?.();
  }

  async #run(ctx: WorkerContext): Promise<void> {
    try {
      await this.#task.run(ctx);
      this.#ran?.(true);
    } catch (err) {
      this.#ran?.(false);
      ctx.log.warn({ err, worker: this.name }, `${this.name} failed; it runs again in ${this.#task.intervalMs} ms`);
    }
  }
}
