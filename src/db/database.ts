import type { Database, DatabaseLogger } from './database-handle.js';
import { migrateToLatest } from './migrate.js';
import { openPglite } from './pglite.js';
import { checkPooledSessionDefaults, openPostgres } from './postgres.js';

export interface DatabaseOptions {
  /** PostgreSQL when set; otherwise embedded PGlite. */
  databaseUrl?: string;
  /** PGlite's data directory; in memory when undefined. */
  dataDir?: string;
  /** An in-memory PGlite starts from this data directory dump (tests: see openPglite). */
  pgliteTemplate?: Blob;
  poolMax?: number;
  connectTimeoutMs?: number;
  statementTimeoutMs?: number;
  /** `transaction` behind PgBouncer in transaction mode (src/db/postgres.ts). */
  pooler?: 'none' | 'transaction';
  logger?: DatabaseLogger;
  /** Run pending migrations before returning (default true). */
  migrate?: boolean;
}

const consoleLogger: DatabaseLogger = { error: (obj, msg) => console.error(msg ?? 'database error', obj) };

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const postgres = options.databaseUrl
    ? {
        databaseUrl: options.databaseUrl,
        poolMax: options.poolMax ?? 10,
        connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
        statementTimeoutMs: options.statementTimeoutMs ?? 15_000,
        pooler: options.pooler ?? 'none',
        logger: options.logger ?? consoleLogger,
      }
    : undefined;
  const database = postgres ? openPostgres(postgres) : await openPglite(options.dataDir, options.pgliteTemplate);
  try {
    if (postgres?.pooler === 'transaction') await checkPooledSessionDefaults(database.db, postgres.statementTimeoutMs);
    if (options.migrate !== false) await migrateToLatest(database.db);
  } catch (err) {
    await database.close();
    throw err;
  }
  return database;
}
