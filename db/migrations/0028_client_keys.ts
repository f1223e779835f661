import { sql, type Kysely } from 'kysely';

/**
 * Client authentication by signed assertion (private_key_jwt): the public keys an integration signs with, from a
 * registered JWKS file or fetched from its JWKS URL, and the assertion ids already accepted, kept until the
 * assertion expires so that none is accepted twice by any process.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('client_key_sets')
    .addColumn('agency_id', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    // The registered keys, or those last fetched from jwks_url.
    .addColumn('jwks', 'jsonb', (c) => c.notNull())
    .addColumn('jwks_url', 'text')
    .addColumn('allow_http_loopback', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('fetched_at', 'timestamptz')
    .addColumn('fresh_until', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('client_key_sets_pk', ['agency_id', 'client_id'])
    .addForeignKeyConstraint('client_key_sets_client_fk', ['agency_id', 'client_id'], 'client_credentials', [
      'agency_id',
      'client_id',
    ])
    .execute();
  await db.schema
    .createTable('client_assertion_ids')
    .addColumn('agency_id', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('jti', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('client_assertion_ids_pk', ['agency_id', 'client_id', 'jti'])
    .addForeignKeyConstraint('client_assertion_ids_client_fk', ['agency_id', 'client_id'], 'client_credentials', [
      'agency_id',
      'client_id',
    ])
    .execute();
  await db.schema
    .createIndex('client_assertion_ids_expires_at')
    .on('client_assertion_ids')
    .column('expires_at')
    .execute();
}
