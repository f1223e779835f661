import { sql, type Kysely } from 'kysely';

/**
 * The agency console's sign-in sessions. The cookie holds a random value; the row is keyed by its SHA-256 (as the
 * MCP surface keys its bearer values), so a copy of the table signs no one in.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('console_sessions')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('agency_id', 'text', (c) => c.notNull().references('agencies.id'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_seen_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('console_sessions_user').on('console_sessions').column('user_id').execute();
  await db.schema.createIndex('console_sessions_expiry').on('console_sessions').column('expires_at').execute();
}
