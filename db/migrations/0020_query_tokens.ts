import { sql, type Kysely } from 'kysely';

/**
 * Governed query tokens (`createQueryToken`): a credential that runs one governed query with fixed parameters, created by
 * an extension for a spreadsheet. Only the SHA-256 hash of the secret is stored; a presented secret is looked up by it.
 * Audit records gain `details`: what a call said about itself that is neither a resource id nor its source (a governed
 * query run's query, parameters, natural-language input and query token).
 */

async function createQueryTokens(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('query_tokens')
    .addColumn('agency_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('query_tokens_pk', ['agency_id', 'id'])
    .addColumn('extension_id', 'text', (c) => c.notNull())
    .addForeignKeyConstraint('query_tokens_extension_fk', ['agency_id', 'extension_id'], 'extensions', [
      'agency_id',
      'id',
    ])
    .addColumn('name', 'text', (c) => c.notNull().check(sql`length(name) between 1 and 200`))
    .addColumn('query_id', 'text', (c) => c.notNull())
    .addColumn('parameters', 'jsonb', (c) => c.notNull().check(sql`jsonb_typeof(parameters) = 'object'`))
    .addColumn('phi_mode', 'text', (c) => c.notNull().check(sql`phi_mode in ('no_phi', 'phi')`))
    .addColumn('token_hash', 'text', (c) => c.notNull())
    .addColumn('token_hint', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('last_used_at', 'timestamptz')
    .addCheckConstraint('query_tokens_expiry', sql`expires_at > created_at`)
    .execute();
  // Each use finds its token by the secret's hash, whatever the agency (the secret is 256 random bits: no collisions).
  await db.schema.createIndex('query_tokens_hash_idx').on('query_tokens').column('token_hash').execute();
  // An extension's tokens, newest first (`listQueryTokens`).
  await db.schema
    .createIndex('query_tokens_extension_idx')
    .on('query_tokens')
    .columns(['agency_id', 'extension_id', 'created_at desc', 'id desc'])
    .execute();
}

export async function up(db: Kysely<any>): Promise<void> {
  await createQueryTokens(db);
  await db.schema.alterTable('audit_events').addColumn('details', 'jsonb').execute();
}
