/**
 * Webhook delivery benchmark (separate from `npm run bench`, whose scenarios are HTTP requests measured against a
 * baseline route): one delivery worker, in this process, delivering to a loopback receiver in a child process.
 *   throughput  N events written at once; deliveries per second until the receiver has every one
 *   latency     events written one per transaction at a steady rate; event time to arrival, p50 and p99
 * Usage: [BENCH_DATABASE_URL=postgres://…] npm run -s bench:webhooks -- [--events 3000] [--rate 50] [--duration 10]
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { createAgency } from '../src/admin/agency.js';
import { webhookCommands } from '../src/admin/webhook.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { webhookOutbox } from '../src/events/outbox.js';
import { KeyEncryption, keyEncryptionKey } from '../src/identity/key-encryption.js';
import { webhooks } from '../src/workers/webhooks.js';
import { root } from './bench-processes.js';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '3000' },
    rate: { type: 'string', default: '50' },
    duration: { type: 'string', default: '10' },
  },
});
const events = Number(values.events);
const rate = Number(values.rate);
const durationS = Number(values.duration);
const keys = new KeyEncryption(keyEncryptionKey(randomBytes(32), 'bench'));
const databaseUrl = process.env.BENCH_DATABASE_URL;
const tmp = mkdtempSync(join(tmpdir(), 'bench-webhooks-'));
const database = await openDatabase({ databaseUrl, dataDir: join(tmp, 'data') });
const { db } = database;

/** The receiver's reports: delivery id to latency in ms. */
const arrivals = new Map<string, number>();
const receiver: ChildProcess = fork(join(root, 'scripts', 'bench-webhooks-receiver.ts'), {
  execArgv: ['--import', 'tsx'],
});
const port = await new Promise<number>((resolve) =>
  receiver.on('message', (message: { port?: number; delivery?: string; latencyMs?: number }) => {
    if (message.port) resolve(message.port);
    else arrivals.set(message.delivery!, message.latencyMs!);
  }),
);

async function subscribedAgency(name: string): Promise<string> {
  const agencyId = `bench-webhooks-${name}-${randomBytes(3).toString('hex')}`;
  await createAgency(db, { id: agencyId, name: agencyId, serviceZips: ['02108'] });
  await webhookCommands.subscribe.run({
    db,
    config: loadConfig({}),
    keyEncryption: () => keys,
    options: {
      agency: agencyId,
      url: `http://127.0.0.1:${port}/hooks`,
      events: 'task.created',
      'allow-http-loopback': true,
      'baa-signed': true,
      'phi-mode': 'phi',
    },
  });
  return agencyId;
}

const task = (n: number) => ({
  type: 'task.created',
  data: { id: `task_bench${n}`, title: `Bench task ${n}`, status: 'open', priority: 'normal' },
});

async function waitForArrivals(count: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (arrivals.size < count && Date.now() < deadline) await sleep(5);
  if (arrivals.size < count) throw new Error(`only ${arrivals.size} of ${count} deliveries arrived`);
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

async function throughput(): Promise<{ events: number; seconds: number; perSecond: number }> {
  const agencyId = await subscribedAgency('throughput');
  for (let start = 0; start < events; start += 500) {
    await db.transaction().execute(async (trx) => {
      const batch = Array.from({ length: Math.min(events, start + 500) - start }, (_, i) => task(start + i));
      await webhookOutbox(trx, agencyId, batch);
    });
  }
  arrivals.clear();
  const worker = webhooks();
  const started = performance.now();
  worker.start({ db, log: pino({ level: 'warn' }), keyEncryption: () => keys });
  await waitForArrivals(events, 300_000);
  const seconds = (performance.now() - started) / 1000;
  await worker.stop();
  return { events, seconds: Number(seconds.toFixed(2)), perSecond: Math.round(events / seconds) };
}

async function latency(): Promise<{ rate: number; events: number; p50Ms: number; p99Ms: number; maxMs: number }> {
  const agencyId = await subscribedAgency('latency');
  arrivals.clear();
  const worker = webhooks();
  worker.start({ db, log: pino({ level: 'warn' }), keyEncryption: () => keys });
  const total = rate * durationS;
  const started = performance.now();
  for (let i = 0; i < total; i++) {
    await db.transaction().execute((trx) => webhookOutbox(trx, agencyId, [task(i)]));
    const due = started + ((i + 1) * 1000) / rate;
    await sleep(Math.max(0, due - performance.now()));
  }
  await waitForArrivals(total, 60_000);
  await worker.stop();
  const sorted = [...arrivals.values()].sort((a, b) => a - b);
  return {
    rate,
    events: total,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted[sorted.length - 1],
  };
}

try {
  console.error(
    `webhooks bench on ${databaseUrl ? 'PostgreSQL' : 'the embedded store'}: ${events} events for throughput, ${rate}/s for ${durationS} s for latency`,
  );
  const results = {
    engine: databaseUrl ? 'postgresql' : 'pglite',
    cpus: cpus().length,
    loadAverage: loadavg().map((l) => Number(l.toFixed(1))),
    throughput: await throughput(),
    latency: await latency(),
  };
  console.log(JSON.stringify(results, null, 2));
  mkdirSync(join(root, '.bench'), { recursive: true });
  writeFileSync(
    join(root, '.bench', 'webhooks.json'),
    `${JSON.stringify({ at: new Date().toISOString(), ...results }, null, 2)}\n`,
  );
} finally {
  receiver.disconnect();
  await database.close();
  rmSync(tmp, { recursive: true, force: true });
}
