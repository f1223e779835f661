import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import type { Kysely } from 'kysely';
import type { DB } from '../../src/db/schema.js';
import { webhooks, type WebhookWorkerOptions } from '../../src/workers/webhooks.js';
import type { Worker, WorkerContext } from '../../src/workers/worker.js';
import type { Teardown } from './database.js';
import { testKeyEncryption } from './secrets.js';

export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  /** What the receiver answered. */
  status: number;
}

/** How the receiver answers the nth request of a delivery id (n from 1), at once or after a while; 204 unless told otherwise. */
export type Answer = (deliveryId: string, nth: number, reply: ServerResponse) => number | Promise<number>;

export interface TestReceiver {
  url: string;
  received: ReceivedDelivery[];
  answer: Answer;
  /** Waits until `count` requests have come (or fails after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedDelivery[]>;
}

/** A real HTTP receiver on a loopback port chosen by the system, closed at t's teardown. */
export async function startReceiver(t: Teardown, answer: Answer = () => 204): Promise<TestReceiver> {
  const received: ReceivedDelivery[] = [];
  const seen = new Map<string, number>();
  const receiver: TestReceiver = {
    url: '',
    received,
    answer,
    async waitFor(count, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline)
          throw new Error(`the receiver got ${received.length} of ${count} requests within ${timeoutMs} ms`);
        await sleep(10);
      }
      return received;
    },
  };
  const server = createServer((request, reply) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const id = String(request.headers['x-svc-delivery-id']);
      const nth = (seen.get(id) ?? 0) + 1;
      seen.set(id, nth);
      const status = await receiver.answer(id, nth, reply);
      received.push({ headers: request.headers, rawBody: Buffer.concat(chunks), status });
      reply.statusCode = status;
      reply.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}

/** A delivery worker on `db` with short waits, stopped at t's teardown; its attempts traced and counted by `observers`. */
export function startWebhookWorker(
  t: Teardown,
  db: Kysely<DB>,
  options: WebhookWorkerOptions = {},
  observers: Pick<WorkerContext, 'deliveryTracer' | 'metrics'> = {},
): Worker {
  const worker = webhooks({ idlePollMs: 10, retryDelaysMs: [20, 20, 20, 20, 20], timeoutMs: 5_000, ...options });
  worker.start({ db, log: pino({ level: 'silent' }), keyEncryption: () => testKeyEncryption, ...observers });
  t.teardown(() => worker.stop());
  return worker;
}
