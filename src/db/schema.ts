import type { AgencyTables } from './tables/agencies.js';
import type { AgencyDirectoryTables } from './tables/agency-directory.js';
import type { CommandLedgerTables } from './tables/command-ledger.js';
import type { IdentityTables } from './tables/identity.js';
import type { PseudonymTables } from './tables/pseudonyms.js';
import type { ServiceSecretTables } from './tables/service-secrets.js';
import type { UsageTables } from './tables/usage.js';
import type { WebhookTables } from './tables/webhooks.js';
import type { PeopleTables } from './tables/people.js';
import type { WritePositionTables } from './tables/write-positions.js';
import type { PatientTables } from '../resources/patients/patient-tables.js';
import type { ReferralTables } from '../resources/referrals/referral-tables.js';
import type { IntakeTables } from '../resources/intakes/intake-tables.js';
import type { VisitTables } from '../resources/visits/visit-tables.js';
import type { TaskTables } from '../resources/tasks/task-tables.js';
import type { HhvbpTables } from '../resources/quality/hhvbp-tables.js';
import type { PhysicianOrderTables } from '../resources/physician-orders/physician-order-tables.js';
import type { WorkingCollectionTables } from '../resources/working-collections/working-collection-tables.js';
import type { RemittanceTables } from '../resources/remittances/remittance-tables.js';
import type { QueryTokenTables } from '../resources/query-tokens/query-token-tables.js';

/**
 * Table types for Kysely, kept in step with db/migrations/: the platform's own under tables/, each resource
 * family's beside its handlers (src/resources/<family>/<family>-tables.ts, part of this layer).
 */
export interface DB
  extends AgencyTables,
    AgencyDirectoryTables,
    IdentityTables,
    PseudonymTables,
    UsageTables,
    CommandLedgerTables,
    ServiceSecretTables,
    WebhookTables,
    PatientTables,
    ReferralTables,
    IntakeTables,
    VisitTables,
    TaskTables,
    HhvbpTables,
    PhysicianOrderTables,
    WorkingCollectionTables,
    RemittanceTables,
    QueryTokenTables,
    PeopleTables,
    WritePositionTables {}
