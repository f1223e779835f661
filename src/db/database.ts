import type { Database, DatabaseLogger } from './database-handle.js';
import { migrateToLatest } from './migrate.js';
import { openPglite } from './pglite.js';
import { openPostgres } from './postgres.js';

interface DatabaseOptions {
  /** PostgreSQL when set; otherwise embedded PGlite. */
  databaseUrl?: string;
  /** PGlite's data directory; in memory when undefined. */
  dataDir?: string;
  /** An in-memory PGlite starts from this data directory dump (tests: see openPglite). */
  pgliteTemplate?: Blob;
  poolMax?: number;
  connectTimeoutMs?: number;
  statementTimeoutMs?: number;
  logger?: DatabaseLogger;
  /** Run pending migrations before returning (default true). */
  migrate?: boolean;
}

const consoleLogger: DatabaseLogger = { error: (obj, msg) => console.error(msg ?? 'database error', obj) };

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const database = options.databaseUrl
    ? openPostgres({
        databaseUrl: options.databaseUrl,
        poolMax: options.poolMax ?? 10,
        connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
        statementTimeoutMs: options.statementTimeoutMs ?? 15_000,
        logger: options.logger ?? consoleLogger,
      })
    : await openPglite(options.dataDir, options.pgliteTemplate);
  if (options.migrate === false) return database;
  try {
    await migrateToLatest(database.db);
  } catch (err) {
    await database.close();
    throw err;
  }
  return database;
}
