import type { components } from '../../generated/openapi.js';
import { resourceNotFound, type Handler, type QueryParams, type RequestContext } from '../handler.js';
import { PlatformError } from '../../shared/platform-error.js';
import { listPage } from '../../db/paging.js';
import { filteredVisits, findVisit, VISIT_ORDER, type VisitFilters, type VisitRow } from './visit-repository.js';
import { instantToYear } from '../../domain/deidentify.js';
import { checkYearBoundary, patientIdFilter } from '../phi-view.js';

type VisitSummary = components['schemas']['VisitSummary'];
type VisitDetail = components['schemas']['VisitDetail'];
type VisitContext = Pick<RequestContext<'listVisits'>, 'principal' | 'pseudonyms' | 'audit'>;

function invalid(field: string, message: string): PlatformError {
  return new PlatformError('PLATFORM_INVALID_INPUT', message, { field });
}

function toSummary(row: VisitRow): VisitSummary {
  return {
    id: row.id,
    patient_id: row.patient_id,
    episode_id: row.episode_id,
    discipline: row.discipline,
    visit_type: row.visit_type,
    status: row.status,
    scheduled_start: row.scheduled_start.toISOString(),
    scheduled_end: row.scheduled_end.toISOString(),
    actual_start: row.actual_start?.toISOString() ?? null,
    actual_end: row.actual_end?.toISOString() ?? null,
    clinician_id: row.clinician_id,
    clinician_name: row.clinician_name,
    office_id: row.office_id,
    updated_at: row.updated_at.toISOString(),
  };
}

function toDetail(row: VisitRow): VisitDetail {
  return {
    ...toSummary(row),
    service_code: row.service_code,
    duration_minutes: row.duration_minutes,
    evv_status: row.evv_status,
    documentation_status: row.documentation_status,
    missed_reason: row.missed_reason,
    cancellation_reason: row.cancellation_reason,
  };
}

/** A bound of the schedule window; in a no_phi session, January 1 at 00:00 UTC. */
function scheduleBound(ctx: VisitContext, field: 'scheduled_from' | 'scheduled_to', value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const bound = new Date(value);
  checkYearBoundary(ctx, field, bound.toISOString(), instantToYear(bound));
  return bound;
}

async function visitFilters(ctx: VisitContext, query: QueryParams<'listVisits'>): Promise<VisitFilters> {
  const scheduledFrom = scheduleBound(ctx, 'scheduled_from', query.scheduled_from);
  const scheduledTo = scheduleBound(ctx, 'scheduled_to', query.scheduled_to);
  if (scheduledFrom && scheduledTo && scheduledFrom >= scheduledTo) {
    throw invalid('scheduled_to', 'scheduled_to must be later than scheduled_from (scheduled_from is inclusive, scheduled_to exclusive).');
  }
  const patientId = await patientIdFilter(ctx, query.patient_id);
  return { patientId, discipline: query.discipline, status: query.status, clinicianId: query.clinician_id, scheduledFrom, scheduledTo };
}

export const listVisits: Handler<'listVisits'> = async (ctx) => {
  const filters = await visitFilters(ctx, ctx.query);
  const { rows, meta } = await listPage(filteredVisits(ctx.db, ctx.principal.agencyId, filters), VISIT_ORDER, ctx.query, ctx.cursors);
  ctx.audit.resourceIds = rows.map((row) => row.id);
  return { data: rows.map(toSummary), meta };
};

export const getVisit: Handler<'getVisit'> = async (ctx) => {
  const row = await findVisit(ctx.db, ctx.principal.agencyId, ctx.params.id);
  if (!row) throw resourceNotFound('visit', ctx.params.id);
  ctx.audit.resourceIds = [row.id];
  return { data: toDetail(row) };
};
