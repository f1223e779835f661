import { createHash } from 'node:crypto';
import type { Compilable, CompiledQuery, Kysely } from 'kysely';
import type { DB } from './schema.js';

const MARK = '\u0000param:';

/** Marked texts by their text: a command's statements are marked on every call, and hashing each time is waste. */
const marked = new Map<string, string>();

/**
 * Marks a statement for PostgreSQL to prepare (src/db/postgres.ts), under `name` and a hash of its text: each
 * distinct text is prepared once per connection (and kept here), so mark only statements that take a few texts,
 * never one per call.
 */
export function asPrepared<Row>(name: string, query: CompiledQuery<Row>): CompiledQuery<Row> {
  let sql = marked.get(query.sql);
  if (sql === undefined) {
    sql = `/* prepared:${name}-${createHash('sha1').update(query.sql).digest('base64url').slice(0, 12)} */ ${query.sql}`;
    marked.set(query.sql, sql);
  }
  return { ...query, sql };
}

/**
 * A query built and compiled once, then rerun with new parameter values, and on PostgreSQL sent as a named
 * prepared statement (src/db/postgres.ts). For hot reads: Kysely's builder and PostgreSQL's planner cost more
 * per call than executing a primary-key read. `build` gets placeholder strings for the parameters and must use
 * each as a plain value (compared or inserted, never concatenated). `name` must be unique among them.
 */
export function reusableQuery<P extends string, Row>(
  name: string,
  names: readonly P[],
  build: (db: Kysely<DB>, params: Record<P, string>) => Compilable<Row>,
) {
  let compiled: CompiledQuery<Row> | undefined;
  const compile = (db: Kysely<DB>): CompiledQuery<Row> => {
    const query = build(
      db,
      Object.fromEntries(names.map((param) => [param, MARK + param])) as Record<P, string>,
    ).compile();
    const unused = names.filter((param) => !query.parameters.includes(MARK + param));
    if (unused.length > 0)
      throw new Error(`reusableQuery ${name}: parameters ${unused.join(', ')} are not values of the query`);
    return asPrepared(name, query);
  };
  return async (db: Kysely<DB>, values: Record<P, string | null>): Promise<Row[]> => {
    compiled ??= compile(db);
    const parameters = compiled.parameters.map((p) =>
      typeof p === 'string' && p.startsWith(MARK) ? values[p.slice(MARK.length) as P] : p,
    );
    return (await db.executeQuery<Row>({ ...compiled, parameters })).rows;
  };
}
