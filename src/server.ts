import closeWithGrace from 'close-with-grace';
import { pino } from 'pino';
import { databaseOptions, loadServerConfig } from './config.js';
import { openDatabase } from './db/database.js';
import { buildApp } from './app.js';
import { describeDemo, ensureDemo } from './admin/demo.js';
import { ensureSigningKey } from './identity/signing-keys.js';
import { loadKeyEncryption } from './identity/key-encryption-keys.js';
import { sealSecrets, type SealingReport } from './identity/secrets-at-rest.js';
import type { KeyEncryption } from './identity/key-encryption.js';

const logger = pino({ level: process.env.LOG_LEVEL || 'info' });

function logSealing(sealing: SealingReport, keys: KeyEncryption): void {
  const { current, previous } = keys;
  logger.info(`Secrets at rest are sealed under key-encryption key ${current.id} (${current.source})`);
  if (sealing.sealed > 0) logger.warn(`Sealed ${sealing.sealed} secrets that were stored in plaintext (written before secrets were encrypted at rest)`);
  if (sealing.underPreviousKey > 0) {
    logger.warn(`${sealing.underPreviousKey} secrets are still sealed under a previous key: once every process accepts ${current.id}, run "npm run -s admin -- secrets rewrap"`);
  } else if (previous.length > 0) {
    logger.info(`No secret is sealed under SECRETS_KEY_PREVIOUS (${previous.map((k) => k.id).join(', ')}): this database does not need it`);
  }
}

async function main() {
  const config = loadServerConfig();
  const keyEncryption = loadKeyEncryption(config.secretsKey, (message) => logger.warn(message));
  const database = await openDatabase({ ...databaseOptions(config), logger });
  const sealing = await sealSecrets(database.db, keyEncryption);
  logSealing(sealing, keyEncryption);
  await ensureSigningKey(database.db, keyEncryption, config.tokenTtlSeconds);
  // The embedded store is for trying the service out: an empty one gets a demo agency and credentials.
  const demo = !config.databaseUrl || process.env.DEMO === '1' ? await ensureDemo(database.db, config.tokenIssuer) : undefined;
  const app = await buildApp({ config, database, keyEncryption, logger });

  closeWithGrace({ delay: config.shutdownGraceMs }, async ({ signal, err }) => {
    if (err) logger.error({ err }, 'shutting down after an error');
    else logger.info({ signal }, 'shutting down: draining in-flight requests');
    // The app's close stops its workers after in-flight requests: they flush what those requests left.
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
