import type { Kysely } from 'kysely';
import type { DB } from './schema.js';
import type { DatabaseObserver } from './database-observers.js';
import type { ReadReplicas } from './read-replicas.js';

/** A PostgreSQL pool's connections at one instant. */
interface PoolStats {
  total: number;
  idle: number;
  /** Requests waiting for a connection. */
  waiting: number;
  max: number;
}

/** An open store on either engine: what database.ts opens and pglite.ts and postgres.ts each build. */
export interface Database {
  db: Kysely<DB>;
  engine: 'postgres' | 'pglite';
  /** Idempotent. */
  close(): Promise<void>;
  /** Reports statements (and, on PostgreSQL, waits for a connection) to `observer` until the function returned is called. */
  observe(observer: DatabaseObserver): () => void;
  /** PostgreSQL only: the pool's connections now. */
  poolStats?(): PoolStats;
  /** PGlite only: the data directory as a dump, which `pgliteTemplate` can start another store from. */
  dumpDataDir?(): Promise<Blob>;
  /** PostgreSQL with read replicas (DATABASE_READ_URL) only: where a read runs, and where commands leave their mark. */
  replicas?: ReadReplicas;
}

export interface DatabaseLogger {
  error(obj: unknown, msg?: string): void;
}
