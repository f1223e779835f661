import { resourceNotFound, type Handler, type QueryParams } from '../handler.js';
import { invalidInput } from '../../shared/platform-error.js';
import type { TenantStore } from '../../db/tenant-store.js';
import { findVisit, listVisitPage, type VisitFilters } from './visit-repository.js';
import { visitDetail, visitSummary } from './visit-view.js';
import { instantToYear } from '../../domain/deidentify.js';
import { checkYearBoundary } from '../phi-view.js';

/** A bound of the schedule window; in a no_phi session, January 1 at 00:00 UTC. */
function scheduleBound(
  store: TenantStore,
  field: 'scheduled_from' | 'scheduled_to',
  value: string | undefined,
): Date | undefined {
  if (value === undefined) return undefined;
  const bound = new Date(value);
  checkYearBoundary(store, field, bound.toISOString(), instantToYear(bound));
  return bound;
}

function visitFilters(store: TenantStore, query: QueryParams<'listVisits'>): VisitFilters {
  const scheduledFrom = scheduleBound(store, 'scheduled_from', query.scheduled_from);
  const scheduledTo = scheduleBound(store, 'scheduled_to', query.scheduled_to);
  if (scheduledFrom && scheduledTo && scheduledFrom >= scheduledTo) {
    throw invalidInput(
      'scheduled_to',
      'scheduled_to must be later than scheduled_from (scheduled_from is inclusive, scheduled_to exclusive).',
    );
  }
  return {
    patientId: query.patient_id,
    discipline: query.discipline,
    status: query.status,
    clinicianId: query.clinician_id,
    scheduledFrom,
    scheduledTo,
  };
}

export const listVisits: Handler<'listVisits'> = async (ctx) => {
  const filters = visitFilters(ctx.store, ctx.query);
  const { rows, meta } = await listVisitPage(ctx.store, filters, ctx.query, ctx.cursors);
  return { data: rows.map(visitSummary), meta };
};

export const getVisit: Handler<'getVisit'> = async (ctx) => {
  const row = await findVisit(ctx.store, ctx.params.id);
  if (!row) throw resourceNotFound('visit', ctx.params.id);
  return { data: visitDetail(row) };
};
