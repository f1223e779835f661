import closeWithGrace from 'close-with-grace';
import { pino } from 'pino';
import { databaseOptions, loadServerConfig, type Config } from './config.js';
import { openDatabase } from './db/database.js';
import { buildApp } from './app.js';
import { describeDemo, ensureDemo } from './admin/demo.js';
import { ensureSigningKey } from './identity/signing-keys.js';
import { loadKeyEncryption } from './identity/key-encryption-keys.js';
import { sealSecrets, type SealingReport } from './identity/secrets-at-rest.js';
import type { KeyEncryption } from './identity/key-encryption.js';
import { startTracing } from './observability/tracing.js';
import { serveMetrics } from './observability/metrics-server.js';
import { safeLoggerOptions } from './db/database-error-log.js';
import { webhookOutbox } from './events/outbox.js';
import { listenAdminSocket, type AdminSocket } from './admin-socket.js';
import type { Database } from './db/database-handle.js';

const logger = pino({ level: process.env.LOG_LEVEL || 'info', ...safeLoggerOptions });

function logSealing(sealing: SealingReport, keys: KeyEncryption): void {
  const { current, previous } = keys;
  logger.info(`Secrets at rest are sealed under key-encryption key ${current.id} (${current.source})`);
  if (sealing.sealed > 0)
    logger.warn(
      `Sealed ${sealing.sealed} secrets that were stored in plaintext (written before secrets were encrypted at rest)`,
    );
  if (sealing.underPreviousKey > 0) {
    logger.warn(
      `${sealing.underPreviousKey} secrets are still sealed under a previous key: once every process accepts ${current.id}, run "npm run -s admin -- secrets rewrap"`,
    );
  } else if (previous.length > 0) {
    logger.info(
      `No secret is sealed under SECRETS_KEY_PREVIOUS (${previous.map((k) => k.id).join(', ')}): this database does not need it`,
    );
  }
}

/** On the embedded store this process holds the data directory: the admin CLI runs its commands through it. */
async function adminSocket(
  config: Config,
  database: Database,
  keyEncryption: KeyEncryption,
): Promise<AdminSocket | undefined> {
  if (database.engine !== 'pglite') return undefined;
  const runtime = { db: database.db, config, keyEncryption: () => keyEncryption, outbox: webhookOutbox };
  // Without it the server still serves; only the admin CLI needs it stopped (a path too long for a socket, say).
  return listenAdminSocket(runtime, logger).catch((err: Error) => {
    logger.warn(`No admin socket (${err.message}): the admin CLI needs the server stopped to open ${config.dataDir}`);
    return undefined;
  });
}

async function main() {
  const config = loadServerConfig();
  // Before anything runs a query: spans need their context manager in place (off unless OTEL_* ask for it).
  const tracing = config.tracing ? await startTracing({ exporter: config.tracing }) : undefined;
  const keyEncryption = loadKeyEncryption(config.secretsKey, (message) => logger.warn(message));
  const database = await openDatabase({ ...databaseOptions(config), logger });
  const sealing = await sealSecrets(database.db, keyEncryption);
  logSealing(sealing, keyEncryption);
  await ensureSigningKey(database.db, keyEncryption, config.tokenTtlSeconds);
  // The embedded store is for trying the service out: an empty one gets a demo agency and credentials.
  const demo =
    !config.databaseUrl || process.env.DEMO === '1' ? await ensureDemo(database.db, config.tokenIssuer) : undefined;
  const app = await buildApp({ config, database, keyEncryption, logger, tracing });
  const admin = await adminSocket(config, database, keyEncryption);
  const { metrics } = app.observability;
  const metricsServer =
    metrics && config.metrics.port !== undefined
      ? await serveMetrics(metrics, config.host, config.metrics.port)
      : undefined;

  closeWithGrace({ delay: config.shutdownGraceMs }, async ({ signal, err }) => {
    if (err) logger.error({ err }, 'shutting down after an error');
    else logger.info({ signal }, 'shutting down: draining in-flight requests');
    // Admin commands run on the database too: none starts now, and those running finish first.
    await admin?.close();
    // The app's close stops its workers after in-flight requests: they flush what those requests left.
    await app.close();
    await metricsServer?.close();
    await database.close();
    // Spans still batched go out last, with the shutdown's own.
    await tracing?.shutdown();
  });

  await app.listen({ host: config.host, port: config.port });
  const store = database.engine === 'pglite' ? `embedded PostgreSQL in ${config.dataDir}` : 'PostgreSQL';
  logger.info(`Extension API ready on ${store}; API reference at http://${config.host}:${config.port}/platform/api/`);
  if (admin) logger.info(`Admin CLI commands run through ${admin.path} (owner-only)`);
  if (metricsServer) logger.info(`Metrics at http://${config.host}:${metricsServer.port}/metrics`);
  if (tracing) logger.info(`Tracing on: spans go to the ${config.tracing} exporter`);
  if (demo) process.stdout.write(describeDemo(demo));
}

// Configuration and start-up problems (a bad variable, a locked data directory) are reported plainly, without a stack.
main().catch((err: Error) => {
  logger.fatal(err.message);
  process.exit(1);
});
