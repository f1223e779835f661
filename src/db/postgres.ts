import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database, DatabaseLogger } from './database-handle.js';
import { DatabaseObservers } from './database-observers.js';
import type { DB } from './schema.js';
import { pgTypes } from './type-parsers.js';

interface PostgresOptions {
  databaseUrl: string;
  poolMax: number;
  connectTimeoutMs: number;
  statementTimeoutMs: number;
  logger: DatabaseLogger;
}

/** The marker reusableQuery() puts in front of a statement worth preparing (src/db/reusable-query.ts). */
const PREPARED = /^\/\* prepared:([\w-]+) \*\//;

/**
 * Kysely sends every statement as text, so PostgreSQL plans it on every call; for hot reads the plan costs more
 * than the execution. Marked statements go as named prepared statements instead, planned once per connection.
 */
function prepareMarkedStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (config: unknown, values?: unknown) => Promise<unknown>;
  client.query = ((config: unknown, values?: unknown) => {
    const name = typeof config === 'string' ? PREPARED.exec(config)?.[1] : undefined;
    return name ? query({ name, text: config, values }) : query(config, values);
  }) as typeof client.query;
}

/** Times each wait for a connection (Kysely asks the pool for one per query or transaction). */
function timeConnectionWaits(pool: pg.Pool, observers: DatabaseObservers): void {
  const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  pool.connect = (async () => {
    const start = performance.now();
    const client = await connect();
    observers.connectionWait(performance.now() - start);
    return client;
  }) as typeof pool.connect;
}

export function openPostgres(options: PostgresOptions): Database {
  const pool = new pg.Pool({
    connectionString: options.databaseUrl,
    max: options.poolMax,
    connectionTimeoutMillis: options.connectTimeoutMs,
    statement_timeout: options.statementTimeoutMs,
    // PGlite runs in UTC; the same session zone keeps ::date and ::text of timestamps equal on both engines.
    options: '-c TimeZone=UTC',
    types: pgTypes,
  });
  // Without listeners, a connection dropped by the server emits an unhandled 'error' and kills the process.
  pool.on('error', (err) => options.logger.error({ err }, 'idle PostgreSQL connection failed'));
  pool.on('connect', (client) => {
    client.on('error', (err) => options.logger.error({ err }, 'PostgreSQL connection failed'));
    prepareMarkedStatements(client);
  });
  const observers = new DatabaseObservers();
  timeConnectionWaits(pool, observers);
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }), log: observers.log });
  let closing: Promise<void> | undefined;
  return {
    db,
    engine: 'postgres',
    close: () => (closing ??= db.destroy()),
    observe: (observer) => observers.add(observer),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: options.poolMax }),
  };
}
