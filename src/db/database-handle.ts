import type { Kysely } from 'kysely';
import type { DB } from './schema.js';

/** An open store on either engine: what database.ts opens and pglite.ts and postgres.ts each build. */
export interface Database {
  db: Kysely<DB>;
  engine: 'postgres' | 'pglite';
  /** Idempotent. */
  close(): Promise<void>;
  /** PGlite only: the data directory as a dump, which `pgliteTemplate` can start another store from. */
  dumpDataDir?(): Promise<Blob>;
}

export interface DatabaseLogger {
  error(obj: unknown, msg?: string): void;
}
