import type { Kysely } from 'kysely';

/**
 * A user's initial password is handed over by an administrator and shown once: the person chooses their own at
 * the first sign-in. Users made before this column never could, so they are asked to as well.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('password_change_required', 'boolean', (c) => c.notNull().defaultTo(true))
    .execute();
}
