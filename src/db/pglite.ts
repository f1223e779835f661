import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { Kysely } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import { acquireDataDirLock, type DataDirLock } from './data-dir-lock.js';
import type { Database } from './database-handle.js';
import { DatabaseObservers } from './database-observers.js';
import type { DB } from './schema.js';
import { parsers, serializers } from './type-parsers.js';

/**
 * Embedded PostgreSQL: in memory when dataDir is undefined (tests), else on disk behind a lock file.
 * An in-memory store can start from `template`, a data directory dump (PGlite's dumpDataDir), instead of running
 * initdb: about 1 s instead of 4 to 6.
 */
export async function openPglite(dataDir: string | undefined, template?: Blob): Promise<Database> {
  if (template && dataDir !== undefined)
    throw new Error('a PGlite template starts an in-memory store; a data directory keeps its own data');
  let lock: DataDirLock | undefined;
  if (dataDir !== undefined) {
    mkdirSync(dataDir, { recursive: true });
    lock = acquireDataDirLock(dataDir);
  }
  let pglite: PGlite;
  try {
    pglite = await PGlite.create(dataDir, { parsers, serializers, ...(template ? { loadDataDir: template } : {}) });
  } catch (err) {
    lock?.release();
    throw err;
  }
  // The dialect queues connections: PGlite is one session, so a transaction must not interleave with other queries.
  const observers = new DatabaseObservers();
  const db = new Kysely<DB>({ dialect: new PGliteDialect(pglite), log: observers.log });
  let closing: Promise<void> | undefined;
  const close = async () => {
    try {
      await db.destroy();
    } finally {
      lock?.release();
    }
  };
  return {
    db,
    engine: 'pglite',
    close: () => (closing ??= close()),
    observe: (observer) => observers.add(observer),
    dumpDataDir: () => pglite.dumpDataDir('none'),
  };
}
