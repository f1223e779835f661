import type { Generated } from 'kysely';

/** Table types for Kysely; one interface per table, kept in step with db/migrations/. */
export type AgencyStatus = 'active' | 'disabled';

export interface AgenciesTable {
  id: string;
  name: string;
  status: Generated<AgencyStatus>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface DB {
  agencies: AgenciesTable;
}
