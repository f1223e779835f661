import closeWithGrace from 'close-with-grace';
import { pino } from 'pino';
import { loadServerConfig } from './config.js';
import { openDatabase } from './db/database.js';
import { buildApp } from './app.js';
import { describeDemo, ensureDemo } from './admin/demo.js';
import { ensureSigningKey } from './identity/signing-keys.js';
import { startHousekeeping } from './gateway/housekeeping.js';

const logger = pino({ level: process.env.LOG_LEVEL || 'info' });

async function main() {
  const config = loadServerConfig();
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolMax: config.db.poolMax,
    connectTimeoutMs: config.db.connectTimeoutMs,
    statementTimeoutMs: config.db.statementTimeoutMs,
    logger,
  });
  await ensureSigningKey(database.db, config.tokenTtlSeconds);
  // The embedded store is for trying the service out: an empty one gets a demo agency and credentials.
  const demo = !config.databaseUrl || process.env.DEMO === '1' ? await ensureDemo(database.db, config.tokenIssuer) : undefined;
  const app = await buildApp({ config, database, logger });
  const stopHousekeeping = startHousekeeping(database.db, logger);

  closeWithGrace({ delay: config.shutdownGraceMs }, async ({ signal, err }) => {
    if (err) logger.error({ err }, 'shutting down after an error');
    else logger.info({ signal }, 'shutting down: draining in-flight requests');
    stopHousekeeping();
    await app.close();
    await database.close();
  });

  await app.listen({ host: config.host, port: config.port });
  const store = database.engine === 'pglite' ? `embedded PostgreSQL in ${config.dataDir}` : 'PostgreSQL';
  logger.info(`Extension API ready on ${store}; API reference at http://${config.host}:${config.port}/platform/api/`);
  if (demo) process.stdout.write(describeDemo(demo));
}

// Configuration and start-up problems (a bad variable, a locked data directory) are reported plainly, without a stack.
main().catch((err: Error) => {
  logger.fatal(err.message);
  process.exit(1);
});
