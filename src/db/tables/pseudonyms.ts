import type { Generated } from 'kysely';

interface PseudonymsTable {
  agency_id: string;
  handle: string;
  kind: string;
  real_id: string;
  created_at: Generated<Date>;
}

export interface PseudonymTables {
  pseudonyms: PseudonymsTable;
}
