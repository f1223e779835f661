import type { Database, DatabaseLogger } from './database-handle.js';
import { migrateToLatest } from './migrate.js';
import { checkPooledSessionDefaults, openPostgres, type PostgresOptions } from './postgres.js';
import { ReadReplicas } from './read-replicas.js';

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
  /** `transaction` behind PgBouncer in transaction mode (src/db/postgres.ts). */
  pooler?: 'none' | 'transaction';
  logger?: DatabaseLogger;
  /** PostgreSQL only: streaming replicas that take reads within `readMaxLagMs` of the primary. */
  readUrls?: readonly string[];
  readMaxLagMs?: number;
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
  const database = postgres ? openPostgres(postgres) : await openEmbedded(options.dataDir, options.pgliteTemplate);
  try {
    if (postgres?.pooler === 'transaction') await checkPooledSessionDefaults(database.db, postgres.statementTimeoutMs);
    if (options.migrate !== false) await migrateToLatest(database.db);
  } catch (err) {
    await database.close();
    throw err;
  }
  return postgres && options.readUrls?.length
    ? withReplicas(database, postgres, options.readUrls, options.readMaxLagMs ?? 2_000)
    : database;
}

/** The poll reads positions a few times within the bound, so a replica is judged on samples younger than it. */
const POLLS_PER_LAG_BOUND = 5;

async function withReplicas(
  database: Database,
  postgres: PostgresOptions,
  urls: readonly string[],
  maxLagMs: number,
): Promise<Database> {
  const replicas = urls.map((databaseUrl) => openPostgres({ ...postgres, databaseUrl }));
  const routing = new ReadReplicas(database.db, replicas, {
    maxLagMs,
    pollMs: Math.max(10, Math.floor(maxLagMs / POLLS_PER_LAG_BOUND)),
    logger: postgres.logger,
  });
  await routing.start();
  return {
    ...database,
    replicas: routing,
    close: async () => {
      await routing.close();
      await database.close();
    },
  };
}

/** PGlite is loaded only when it is used: its module alone costs a process on PostgreSQL about 50 MB of memory. */
async function openEmbedded(dataDir: string | undefined, template: Blob | undefined): Promise<Database> {
  const { openPglite } = await import('./pglite.js');
  return openPglite(dataDir, template);
}
