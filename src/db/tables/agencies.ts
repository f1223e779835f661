import type { Generated } from 'kysely';

type AgencyStatus = 'active' | 'disabled';

interface AgenciesTable {
  id: string;
  name: string;
  status: Generated<AgencyStatus>;
  /** Days a physician has to sign an order before it counts as past its SLA (admin: agency set --order-sla-days). */
  order_sla_days: Generated<number>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface AgencyTables {
  agencies: AgenciesTable;
}
