import { sql, type Kysely } from 'kysely';

/**
 * Secrets at rest: signing keys and service secrets are stored sealed under a key-encryption key that the database
 * does not hold (src/identity/key-encryption.ts). A migration cannot seal the rows written before, since it has no
 * key: the plaintext columns stay, nullable, and each process seals what they still hold when it starts
 * (src/identity/secrets-at-rest.ts). A row holds one form or the other, never both.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('signing_keys').addColumn('private_key_sealed', 'text').execute();
  await db.schema
    .alterTable('signing_keys')
    .alterColumn('private_key_pem', (c) => c.dropNotNull())
    .execute();
  await db.schema
    .alterTable('signing_keys')
    .addCheckConstraint('signing_keys_one_private_key', sql`num_nonnulls(private_key_pem, private_key_sealed) = 1`)
    .execute();
  await db.schema.alterTable('service_secrets').addColumn('secret_sealed', 'text').execute();
  await db.schema
    .alterTable('service_secrets')
    .alterColumn('secret', (c) => c.dropNotNull())
    .execute();
  await db.schema
    .alterTable('service_secrets')
    .addCheckConstraint('service_secrets_one_secret', sql`num_nonnulls(secret, secret_sealed) = 1`)
    .execute();
}
