import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // Symmetric secrets every instance shares, created on first use (e.g. the key that seals list cursors).
  await db.schema
    .createTable('service_secrets')
    .addColumn('purpose', 'text', (c) => c.primaryKey())
    .addColumn('secret', 'bytea', (c) => c.notNull().check(sql`octet_length(secret) = 32`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}
