import { sql, type Kysely, type Selectable } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { Discipline } from '../../db/tables/tenant-row.js';
import type { VisitStatus, VisitsTable } from './visit-tables.js';
import type { ListOrder } from '../../db/paging.js';

export type VisitRow = Selectable<VisitsTable> & { clinician_name: string | null };

export interface VisitFilters {
  patientId?: string;
  discipline?: Discipline;
  status?: VisitStatus;
  clinicianId?: string;
  /** Inclusive. */
  scheduledFrom?: Date;
  /** Exclusive. */
  scheduledTo?: Date;
}

/** The schedule order, served by the (agency_id, [filter,] scheduled_start, id) indexes. */
export const VISIT_ORDER: ListOrder = { columns: ['visits.scheduled_start', 'visits.id'], direction: 'asc' };

function agencyVisits(db: Kysely<DB>, agencyId: string) {
  return db
    .selectFrom('visits')
    .leftJoin('agency_users as clinician', (join) =>
      join.onRef('clinician.agency_id', '=', 'visits.agency_id').onRef('clinician.id', '=', 'visits.clinician_id'),
    )
    .where('visits.agency_id', '=', agencyId)
    .selectAll('visits')
    .select(sql<string | null>`${sql.ref('clinician.first_name')} || ' ' || ${sql.ref('clinician.last_name')}`.as('clinician_name'));
}

/** The agency's visits matching `filters`, unordered (for listPage). */
export function filteredVisits(db: Kysely<DB>, agencyId: string, filters: VisitFilters) {
  let query = agencyVisits(db, agencyId);
  if (filters.patientId !== undefined) query = query.where('visits.patient_id', '=', filters.patientId);
  if (filters.discipline !== undefined) query = query.where('visits.discipline', '=', filters.discipline);
  if (filters.status !== undefined) query = query.where('visits.status', '=', filters.status);
  if (filters.clinicianId !== undefined) query = query.where('visits.clinician_id', '=', filters.clinicianId);
  if (filters.scheduledFrom !== undefined) query = query.where('visits.scheduled_start', '>=', filters.scheduledFrom);
  if (filters.scheduledTo !== undefined) query = query.where('visits.scheduled_start', '<', filters.scheduledTo);
  return query;
}

export function findVisit(db: Kysely<DB>, agencyId: string, id: string): Promise<VisitRow | undefined> {
  return agencyVisits(db, agencyId).where('visits.id', '=', id).executeTakeFirst();
}
