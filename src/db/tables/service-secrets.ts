import type { Generated } from 'kysely';

export interface ServiceSecretsTable {
  purpose: string;
  secret: Buffer;
  created_at: Generated<Date>;
}

export interface ServiceSecretTables {
  service_secrets: ServiceSecretsTable;
}
