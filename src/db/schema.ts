import type { AgencyTables } from './tables/agencies.js';
import type { ClinicalTables } from './tables/clinical.js';
import type { CommandLedgerTables } from './tables/command-ledger.js';
import type { IdentityTables } from './tables/identity.js';
import type { PseudonymTables } from './tables/pseudonyms.js';
import type { ServiceSecretTables } from './tables/service-secrets.js';
import type { UsageTables } from './tables/usage.js';

/** Table types for Kysely, one module per family under tables/, kept in step with db/migrations/. */
export interface DB extends AgencyTables, IdentityTables, PseudonymTables, ClinicalTables, UsageTables, CommandLedgerTables, ServiceSecretTables {}
