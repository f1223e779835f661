import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { KeyEncryption } from '../identity/key-encryption.js';
import type { MetricsRegistrar } from '../observability/metrics.js';
import type { DeliveryTracer } from '../observability/call-trace.js';

/** Fits pino and Fastify's logger. */
interface WorkerLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** What a worker works with: the process's database and logger, in the server or in `npm run worker`. */
export interface WorkerContext {
  db: Kysely<DB>;
  log: WorkerLog;
  /** The key-encryption keys, loaded on first call: only workers that open sealed secrets (webhooks) need them. */
  keyEncryption?: () => KeyEncryption;
  /** Where a worker registers its metrics (src/observability/metrics.ts); absent with metrics off. */
  metrics?: MetricsRegistrar;
  /** Spans of webhook delivery attempts; absent with tracing off. */
  deliveryTracer?: DeliveryTracer;
}

/** Background work with one lifecycle, whether it runs in the server or as its own process (scripts/worker.ts). */
export interface Worker {
  readonly name: string;
  start(ctx: WorkerContext): void;
  /** Takes no new work, finishes the run in flight, then writes or hands back what it holds. Resolves when done. */
  stop(): Promise<void>;
}

/** Starts the workers; the function returned stops them all at once, each draining. */
export function startWorkers(workers: Worker[], ctx: WorkerContext): () => Promise<void> {
  for (const worker of workers) worker.start(ctx);
  return async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
  };
}
