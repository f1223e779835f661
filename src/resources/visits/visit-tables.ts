import type { Discipline, TenantRow, Timestamp } from '../../db/tables/tenant-row.js';

export type VisitType =
  | 'start_of_care'
  | 'resumption_of_care'
  | 'recertification'
  | 'routine'
  | 'prn'
  | 'supervisory'
  | 'discharge'
  | 'evaluation';
export type VisitStatus = 'scheduled' | 'in_progress' | 'completed' | 'missed' | 'cancelled';
export type EvvStatus = 'verified' | 'unverified' | 'exception' | 'not_required';
export type DocumentationStatus = 'not_started' | 'in_progress' | 'submitted' | 'approved';

export interface VisitsTable extends TenantRow {
  patient_id: string;
  /** An episode of the same patient. */
  episode_id: string | null;
  discipline: Discipline;
  visit_type: VisitType;
  status: VisitStatus;
  scheduled_start: Timestamp;
  scheduled_end: Timestamp;
  actual_start: Timestamp | null;
  actual_end: Timestamp | null;
  clinician_id: string | null;
  office_id: string | null;
  service_code: string | null;
  duration_minutes: number | null;
  evv_status: EvvStatus;
  documentation_status: DocumentationStatus;
  missed_reason: string | null;
  cancellation_reason: string | null;
}

export interface VisitTables {
  visits: VisitsTable;
}
