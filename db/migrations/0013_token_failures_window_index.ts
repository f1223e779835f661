import type { Kysely } from 'kysely';

/**
 * Each failed token request deletes the minutes that have left the window. Without this index that delete reads the
 * whole table, which grows with the number of addresses failing at once: the cost of a failure would grow with the attack.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('token_failures_window_start').on('token_failures').column('window_start').execute();
}
