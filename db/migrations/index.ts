import type { Migration } from 'kysely';
import * as m0001 from './0001_agencies.js';

/**
 * Every migration, in order. Listed by hand rather than read from the filesystem so the same list
 * works under tsx and from the compiled output. Forward-only: migrations have no `down`.
 */
export const migrations: Record<string, Migration> = {
  '0001_agencies': m0001,
};
