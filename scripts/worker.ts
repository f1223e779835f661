import closeWithGrace from 'close-with-grace';
import { pino } from 'pino';
import { databaseOptions, loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { createWorker, workerNames } from '../src/workers/registry.js';
import { loadKeyEncryption } from '../src/identity/key-encryption-keys.js';
import { startTracing } from '../src/observability/tracing.js';
import type { KeyEncryption } from '../src/identity/key-encryption.js';
import { safeLoggerOptions } from '../src/db/database-error-log.js';

/** `npm run worker -- <name>`: one worker of src/workers/registry.ts as its own process, stopped with drain on SIGTERM/SIGINT. */
async function main(): Promise<void> {
  const name = process.argv[2];
  if (!name) throw new Error(`usage: npm run worker -- <name>; the workers are: ${workerNames.join(', ')}`);
  const worker = createWorker(name);
  const config = loadConfig();
  // Written synchronously: an async write still in flight at exit lands after the final line, out of order.
  const destination = pino.destination({ dest: 1, sync: true });
  const logger = pino({ level: config.logLevel, ...safeLoggerOptions }, destination).child({ worker: name });
  // As in the server: webhook deliveries are spans of their events' traces when the OTEL_* variables ask for it.
  const tracing = config.tracing ? await startTracing({ exporter: config.tracing }) : undefined;
  const database = await openDatabase({ ...databaseOptions(config), logger });
  let keys: KeyEncryption | undefined;
  const keyEncryption = () => (keys ??= loadKeyEncryption(config.secretsKey, (message) => logger.warn(message)));
  worker.start({ db: database.db, log: logger, keyEncryption, deliveryTracer: tracing?.deliveries });
  // A worker's timers never hold a process open (a server must be able to exit); this process exists for it.
  const keepAlive = setInterval(() => {}, 2 ** 31 - 1);
  closeWithGrace({ delay: config.shutdownGraceMs }, async ({ signal, err }) => {
    if (err) logger.error({ err }, 'stopping after an error');
    else logger.info({ signal }, 'stopping: finishing the run in flight');
    await worker.stop();
    await database.close();
    await tracing?.shutdown();
    clearInterval(keepAlive);
    logger.info('stopped');
  });
  const store = database.engine === 'pglite' ? `embedded PostgreSQL in ${config.dataDir}` : 'PostgreSQL';
  logger.info(`worker ${name} running on ${store}`);
}

// An unknown name, a bad variable or a locked data directory is reported plainly, without a stack.
main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
