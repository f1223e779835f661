import { randomBytes } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import pg from 'pg';
import { t as rootTest } from 'tap';
import { databasePooler } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import type { Database } from '../../src/db/database-handle.js';
import type { DB } from '../../src/db/schema.js';
import { pgliteTemplate } from './pglite-template.js';

/** What a helper needs of a test to close what it opened: tap's root test or any subtest. */
export interface Teardown {
  teardown(fn: () => unknown): void;
}

/**
 * The test database of this process, migrated to latest.
 * Without TEST_DATABASE_URL: one in-memory PGlite, started from a migrated template (each instance costs ~735 MB,
 * so it is shared).
 * With TEST_DATABASE_URL (a superuser URL): a fresh database created for this process and dropped at teardown
 * (through the pooler that DATABASE_POOLER names, when scripts/pgbouncer-temp.sh runs the suite).
 * Tests share it, so each test creates the agencies it needs and reads nothing it did not write.
 * It closes (and is dropped) when the root test ends; a test passed here takes that role instead, if this call opens it.
 */
export function testDatabase(t: Teardown = rootTest): Promise<Database> {
  if (!current) {
    const opening = open();
    current = opening;
    t.teardown(async () => {
      if (current === opening) current = undefined;
      await (await opening).close();
    });
  }
  return current;
}

let current: Promise<Database> | undefined;
let currentUrl: string | undefined;

/** The connection URL of this process's PostgreSQL test database (after testDatabase()); undefined on PGlite. */
export function testDatabaseUrl(): string | undefined {
  return currentUrl;
}

function open(): Promise<Database> {
  const adminUrl = process.env.TEST_DATABASE_URL;
  return adminUrl
    ? openPostgresTestDatabase(adminUrl)
    : pgliteTemplate().then((template) => openDatabase({ pgliteTemplate: template }));
}

class RolledBack extends Error {}

/** What `work` returns from inside a transaction that is then rolled back: for trying out what must not stay (a migration's rerun). */
export async function inRolledBackTransaction<T>(
  db: Kysely<DB>,
  work: (trx: Transaction<DB>) => Promise<T>,
): Promise<T> {
  let result: T | undefined;
  await db
    .transaction()
    .execute(async (trx) => {
      result = await work(trx);
      throw new RolledBack();
    })
    .catch((err: unknown) => {
      if (!(err instanceof RolledBack)) throw err;
    });
  return result as T;
}

/** Another pool on this process's PostgreSQL test database, as another server process would have; closed at t's teardown. */
export async function secondPool(t: Teardown, poolMax: number): Promise<Kysely<DB>> {
  if (!currentUrl) throw new Error('secondPool needs the PostgreSQL test database (TEST_DATABASE_URL) to be open');
  const second = await openDatabase({
    databaseUrl: currentUrl,
    poolMax,
    migrate: false,
    pooler: databasePooler(process.env),
  });
  t.teardown(() => second.close());
  return second.db;
}

/**
 * Locks `table` from a second connection until the returned release(), so a handler that reads or writes it waits:
 * the dependable way to keep one running (PGlite has one connection, so this needs PostgreSQL). Closed at t's teardown.
 */
export async function lockTable(t: Teardown, table: 'patients' | 'tasks'): Promise<() => Promise<void>> {
  if (!currentUrl) throw new Error('lockTable needs the PostgreSQL test database (TEST_DATABASE_URL) to be open');
  const blocker = new pg.Client({ connectionString: currentUrl });
  await blocker.connect();
  t.teardown(() => blocker.end());
  await blocker.query('begin');
  await blocker.query(`lock table ${table} in access exclusive mode`);
  return async () => void (await blocker.query('rollback'));
}

async function admin<T>(adminUrl: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

async function openPostgresTestDatabase(adminUrl: string): Promise<Database> {
  const name = `t_${process.pid}_${randomBytes(4).toString('hex')}`;
  await admin(adminUrl, (c) => c.query(`CREATE DATABASE "${name}"`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  currentUrl = url.toString();
  // FORCE terminates connections still open (PostgreSQL 13+).
  const drop = () => admin(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  const database = await openDatabase({
    databaseUrl: url.toString(),
    poolMax: 4,
    pooler: databasePooler(process.env),
  }).catch(async (err: unknown) => {
    await drop();
    throw err;
  });
  return {
    ...database,
    close: async () => {
      await database.close();
      await drop();
    },
  };
}
