import { sql, type Selectable } from 'kysely';
import type { TenantStore } from '../../db/tenant-store.js';
import type { CursorSealer } from '../../db/cursor-sealer.js';
import { listPage, type ListOrder, type ListQuery, type Page } from '../../db/paging.js';
import type { Discipline } from '../../db/tables/tenant-row.js';
import type { VisitStatus, VisitsTable } from './visit-tables.js';

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
const VISIT_ORDER: ListOrder = { columns: ['visits.scheduled_start', 'visits.id'], direction: 'asc' };

function agencyVisits(store: TenantStore) {
  return store
    .selectFrom('visits')
    .leftJoin('agency_users as clinician', (join) =>
      join.on(store.ofAgency('clinician')).onRef('clinician.id', '=', 'visits.clinician_id'),
    )
    .selectAll('visits')
    .select(
      sql<string | null>`${sql.ref('clinician.first_name')} || ' ' || ${sql.ref('clinician.last_name')}`.as(
        'clinician_name',
      ),
    );
}

/** A page of the agency's visits matching `filters`, in schedule order. */
export async function listVisitPage(
  store: TenantStore,
  filters: VisitFilters,
  page: ListQuery,
  cursors: CursorSealer,
): Promise<Page<VisitRow>> {
  let query = agencyVisits(store);
  if (filters.patientId !== undefined) query = query.where('visits.patient_id', '=', filters.patientId);
  if (filters.discipline !== undefined) query = query.where('visits.discipline', '=', filters.discipline);
  if (filters.status !== undefined) query = query.where('visits.status', '=', filters.status);
  if (filters.clinicianId !== undefined) query = query.where('visits.clinician_id', '=', filters.clinicianId);
  if (filters.scheduledFrom !== undefined) query = query.where('visits.scheduled_start', '>=', filters.scheduledFrom);
  if (filters.scheduledTo !== undefined) query = query.where('visits.scheduled_start', '<', filters.scheduledTo);
  return listPage(store, query, VISIT_ORDER, page, cursors);
}

export function findVisit(store: TenantStore, id: string): Promise<VisitRow | undefined> {
  return agencyVisits(store).where('visits.id', '=', id).executeTakeFirst();
}
