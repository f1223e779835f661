import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // Surrogate handles for no_phi sessions: random, stable per agency and resource, never derived from the real id.
  await db.schema
    .createTable('pseudonyms')
    .addColumn('agency_id', 'text', (c) => c.notNull().references('agencies.id'))
    .addColumn('handle', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('real_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('pseudonyms_pk', ['agency_id', 'handle'])
    .addUniqueConstraint('pseudonyms_real_unique', ['agency_id', 'kind', 'real_id'])
    .execute();
}
