import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Database, DatabaseLogger } from './database-handle.js';
import { DatabaseObservers } from './database-observers.js';
import type { DB } from './schema.js';
import { SQLSTATE, sqlState } from './sql-state.js';
import { pgTypes } from './type-parsers.js';
import { listedHosts, WritableHostSelector } from './writable-host.js';

export interface PostgresOptions {
  /** One host, or libpq's list of a primary and its standbys (src/db/writable-host.ts): then the writable one is used. */
  databaseUrl: string;
  poolMax: number;
  connectTimeoutMs: number;
  statementTimeoutMs: number;
  /**
   * `transaction`: connections go through a pooler in transaction mode (PgBouncer), which hands each transaction (or
   * statement outside one) to any server connection. Nothing may then live in a session: start-up parameters are
   * refused by the pooler and a named prepared statement exists on one server connection only.
   */
  pooler: 'none' | 'transaction';
  logger: DatabaseLogger;
}

/** The marker reusableQuery() puts in front of a statement worth preparing (src/db/reusable-query.ts). */
const PREPARED = /^\/\* prepared:([\w-]+) \*\//;

/**
 * Kysely sends every statement as text, so PostgreSQL plans it on every call; for hot reads the plan costs more
 * than the execution. Marked statements go as named prepared statements instead, planned once per connection.
 * Not behind a transaction pooler: the next statement may reach a server connection that never prepared it.
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

/** What every session must have. PGlite runs in UTC; the same zone keeps ::date and ::text of timestamps equal on both engines. */
const SESSION_TIME_ZONE = 'UTC';

/** Direct connections set the session's defaults at start-up; behind a pooler the role's defaults must already be them. */
function sessionParameters(options: PostgresOptions): pg.PoolConfig {
  if (options.pooler === 'transaction') return {};
  return { statement_timeout: options.statementTimeoutMs, options: `-c TimeZone=${SESSION_TIME_ZONE}` };
}

/**
 * Behind a transaction pooler the service cannot set its session's time zone and statement timeout, so it checks
 * that the server's defaults for its role are the configured ones and refuses to start otherwise, saying how to set them.
 */
export async function checkPooledSessionDefaults(db: Kysely<DB>, statementTimeoutMs: number): Promise<void> {
  const { rows } = await sql<{ time_zone: string; statement_timeout: string }>`
    select current_setting('TimeZone') as time_zone, (select setting from pg_settings where name = 'statement_timeout') as statement_timeout`.execute(
    db,
  );
  const [{ time_zone, statement_timeout }] = rows;
  const utc = time_zone === SESSION_TIME_ZONE || time_zone === 'Etc/UTC';
  if (utc && Number(statement_timeout) === statementTimeoutMs) return;
  throw new Error(
    `DATABASE_POOLER=transaction: the role's session defaults are TimeZone=${time_zone} and statement_timeout=${statement_timeout} ms, ` +
      `the service needs TimeZone=UTC and statement_timeout=${statementTimeoutMs} ms (DB_STATEMENT_TIMEOUT_MS). Set them on the server ` +
      `(ALTER ROLE <role> SET TimeZone = 'UTC'; ALTER ROLE <role> SET statement_timeout = ${statementTimeoutMs};) or in PgBouncer's connect_query.`,
  );
}

/**
 * With several hosts, connections go to the writable one. A connection that met a read-only server (its primary was
 * demoted) is closed when handed back, not reused, and the host is looked for again.
 */
function followWritableHost(pool: pg.Pool, selector: WritableHostSelector): void {
  const readOnly = new WeakSet<pg.PoolClient>();
  pool.on('connect', (client) => {
    const lost = () => selector.lost(client as unknown as { host: string; port: number });
    client.on('error', lost);
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    client.query = ((...args: unknown[]) => {
      const result = query(...args);
      if (result instanceof Promise) {
        result.catch((err: unknown) => {
          if (sqlState(err) !== SQLSTATE.readOnlyTransaction) return;
          readOnly.add(client);
          lost();
        });
      }
      return result;
    }) as typeof client.query;
  });
  const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  pool.connect = (async () => {
    const client = await connect();
    const release = client.release;
    client.release = (err?: Error | boolean) =>
      release(err ?? (readOnly.has(client) ? new Error('the server is read-only') : undefined));
    return client;
  }) as typeof pool.connect;
}

export function openPostgres(options: PostgresOptions): Database {
  const selector =
    listedHosts(options.databaseUrl).length > 1
      ? new WritableHostSelector(options.databaseUrl, options.connectTimeoutMs)
      : undefined;
  const pool = new pg.Pool({
    connectionString: selector?.firstHostUrl ?? options.databaseUrl,
    ...(selector ? { Client: selector.clientClass() } : {}),
    max: options.poolMax,
    connectionTimeoutMillis: options.connectTimeoutMs,
    ...sessionParameters(options),
    types: pgTypes,
  });
  // Without listeners, a connection dropped by the server emits an unhandled 'error' and kills the process.
  pool.on('error', (err) => options.logger.error({ err }, 'idle PostgreSQL connection failed'));
  pool.on('connect', (client) => {
    client.on('error', (err) => options.logger.error({ err }, 'PostgreSQL connection failed'));
    if (options.pooler === 'none') prepareMarkedStatements(client);
  });
  if (selector) followWritableHost(pool, selector);
  const observers = new DatabaseObservers();
  timeConnectionWaits(pool, observers);
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }), log: observers.log });
  let closing: Promise<void> | undefined;
  return {
    db,
    engine: 'postgres',
    close: () => (closing ??= db.destroy()),
    observe: (observer) => observers.add(observer),
    poolStats: () => ({
      total: pool.totalCount,
      idle: pool.idleCount,
      waiting: pool.waitingCount,
      max: options.poolMax,
    }),
  };
}
