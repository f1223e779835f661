import type { Generated } from 'kysely';

interface ServiceSecretsTable {
  purpose: string;
  /** Plaintext, only in rows written before secrets were sealed, until the next start seals them. */
  secret: Buffer | null;
  /** The 32-byte secret sealed under the key-encryption key (src/identity/key-encryption.ts). */
  secret_sealed: string | null;
  created_at: Generated<Date>;
}

export interface ServiceSecretTables {
  service_secrets: ServiceSecretsTable;
}
