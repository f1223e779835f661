import type { Generated } from 'kysely';

export type AgencyStatus = 'active' | 'disabled';

export interface AgenciesTable {
  id: string;
  name: string;
  status: Generated<AgencyStatus>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface AgencyTables {
  agencies: AgenciesTable;
}
