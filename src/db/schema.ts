import type { AgencyTables } from './tables/agencies.js';

/** Table types for Kysely, one module per family under tables/, kept in step with db/migrations/. */
export interface DB extends AgencyTables {}
