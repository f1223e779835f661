import type { Worker, WorkerContext } from './worker.js';

export interface PeriodicTask {
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

class PeriodicWorker implements Worker {
  readonly #task: PeriodicTask;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;

  constructor(task: PeriodicTask) {
    this.#task = task;
  }

  get name(): string {
    return this.#task.name;
  }

  start(ctx: WorkerContext): void {
    if (this.#timer) throw new Error(`worker ${this.name} was already started`);
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
    } catch (err) {
      ctx.log.warn({ err, worker: this.name }, `${this.name} failed; it runs again in ${this.#task.intervalMs} ms`);
    }
  }
}
