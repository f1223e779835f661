import type { components } from '../../generated/openapi.js';
import type { VisitRow } from './visit-repository.js';

type VisitSummary = components['schemas']['VisitSummary'];
type VisitDetail = components['schemas']['VisitDetail'];

export function visitSummary(row: VisitRow): VisitSummary {
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

export function visitDetail(row: VisitRow): VisitDetail {
  return {
    ...visitSummary(row),
    service_code: row.service_code,
    duration_minutes: row.duration_minutes,
    evv_status: row.evv_status,
    documentation_status: row.documentation_status,
    missed_reason: row.missed_reason,
    cancellation_reason: row.cancellation_reason,
  };
}
