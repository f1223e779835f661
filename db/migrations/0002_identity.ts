import { sql, type Kysely } from 'kysely';

/**
 * Identity: offices and the agency's service area, extensions (integrations) with their policy, client
 * credentials and secrets, token revocations, signing keys, and the token endpoint's failure counters.
 * Tenant tables carry agency_id in their primary or unique key and in every foreign key, so they can be
 * distributed by agency later. signing_keys and token_failures are global.
 */

async function createOffices(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('offices')
    .addColumn('agency_id', 'text', (c) => c.notNull().references('agencies.id'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('timezone', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('offices_pk', ['agency_id', 'id'])
    .execute();
  await db.schema
    .createTable('agency_service_zips')
    .addColumn('agency_id', 'text', (c) => c.notNull())
    .addColumn('zip_code', 'text', (c) => c.notNull().check(sql`zip_code ~ '^[0-9]{5}$'`))
    .addColumn('office_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('agency_service_zips_pk', ['agency_id', 'zip_code'])
    .addForeignKeyConstraint('agency_service_zips_office_fk', ['agency_id', 'office_id'], 'offices', [
      'agency_id',
      'id',
    ])
    .execute();
}

async function createExtensions(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('extensions')
    .addColumn('agency_id', 'text', (c) => c.notNull().references('agencies.id'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('active').check(sql`status in ('active', 'disabled')`))
    .addColumn('scopes', sql`text[]`, (c) => c.notNull())
    .addColumn('capabilities', sql`text[]`, (c) => c.notNull())
    .addColumn('phi_modes', sql`text[]`, (c) => c.notNull().check(sql`phi_modes <@ array['no_phi', 'phi']::text[]`))
    .addColumn('rate_limit_per_minute', 'integer', (c) => c.notNull().check(sql`rate_limit_per_minute > 0`))
    .addColumn('daily_quota', 'integer', (c) => c.notNull().check(sql`daily_quota > 0`))
    .addColumn('daily_cost_budget', 'integer', (c) => c.check(sql`daily_cost_budget >= 0`))
    // Which versions are retired changes with releases, so the admin tool checks that against the contract.
    .addColumn('contract_version', 'text', (c) => c.notNull())
    .addColumn('tokens_revoked_before', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('extensions_pk', ['agency_id', 'id'])
    .execute();
}

async function createClientCredentials(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('client_credentials')
    .addColumn('client_id', 'text', (c) => c.primaryKey())
    .addColumn('agency_id', 'text', (c) => c.notNull())
    .addColumn('extension_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('client_credentials_agency_client_unique', ['agency_id', 'client_id'])
    .addForeignKeyConstraint('client_credentials_extension_fk', ['agency_id', 'extension_id'], 'extensions', [
      'agency_id',
      'id',
    ])
    .execute();
  await db.schema
    .createTable('client_secrets')
    // Derived from the secret (see src/identity/secrets.ts), so a presented secret finds its one row to verify.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('agency_id', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz')
    .addUniqueConstraint('client_secrets_agency_id_unique', ['agency_id', 'id'])
    .addForeignKeyConstraint('client_secrets_client_fk', ['agency_id', 'client_id'], 'client_credentials', [
      'agency_id',
      'client_id',
    ])
    .execute();
}

async function createRevokedTokens(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('revoked_tokens')
    .addColumn('jti', 'text', (c) => c.primaryKey())
    .addColumn('agency_id', 'text', (c) => c.notNull())
    .addColumn('extension_id', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('revoked_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    // Also the index of the policy load, which reads one extension's revocations.
    .addUniqueConstraint('revoked_tokens_extension_jti_unique', ['agency_id', 'extension_id', 'jti'])
    .addForeignKeyConstraint('revoked_tokens_extension_fk', ['agency_id', 'extension_id'], 'extensions', [
      'agency_id',
      'id',
    ])
    .execute();
}

async function createSigningKeys(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('signing_keys')
    .addColumn('kid', 'text', (c) => c.primaryKey())
    .addColumn('algorithm', 'text', (c) => c.notNull().check(sql`algorithm = 'ES256'`))
    .addColumn('private_key_pem', 'text', (c) => c.notNull())
    .addColumn('public_jwk', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('retired_at', 'timestamptz')
    .addColumn('verify_until', 'timestamptz')
    .addCheckConstraint('signing_keys_retired_verify_until', sql`(retired_at is null) = (verify_until is null)`)
    .execute();
}

/** Failed token requests per bucket (client id or remote address) and counting window, shared by every instance. */
async function createTokenFailures(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('token_failures')
    .addColumn('bucket', 'text', (c) => c.notNull())
    .addColumn('window_start', 'timestamptz', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('token_failures_pk', ['bucket', 'window_start'])
    .execute();
}

export async function up(db: Kysely<any>): Promise<void> {
  await createOffices(db);
  await createExtensions(db);
  await createClientCredentials(db);
  await createRevokedTokens(db);
  await createSigningKeys(db);
  await createTokenFailures(db);
}
