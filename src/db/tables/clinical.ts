import type { ColumnType, Generated, JSONColumnType, Selectable } from 'kysely';

/**
 * Clinical operations tables (db/migrations/0005_clinical.ts). Every row is keyed (agency_id, id).
 * `date` columns are 'YYYY-MM-DD' strings and `numeric` columns exact decimal strings (src/db/type-parsers.ts).
 * jsonb columns are written as JSON text (JSON.stringify): node-postgres would send a JS array as a
 * PostgreSQL array literal, which is not JSON.
 */

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type DefaultedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;

interface TenantRow {
  agency_id: string;
  id: string;
  created_at: DefaultedTimestamp;
  updated_at: DefaultedTimestamp;
}

export type ServiceLine = 'home_health' | 'hospice' | 'private_duty';
export type Gender = 'female' | 'male' | 'unknown';
export type Discipline = 'SN' | 'PT' | 'OT' | 'ST' | 'MSW' | 'HHA';
/** X12 element 1069: 18 self, 01 spouse, 19 child, 20 employee, 53 life partner, G8 other, 21 unknown. */
export type RelationshipToInsured = '18' | '01' | '19' | '20' | '53' | 'G8' | '21';

export type PayorType = 'medicare' | 'medicaid' | 'medicare_advantage' | 'managed_medicaid' | 'commercial' | 'private_pay';

export interface PayorsTable extends TenantRow {
  name: string;
  payor_type: PayorType;
  /** Electronic payer id used on claims. */
  payer_code: string | null;
}

export type ReferralSourceType =
  | 'hospital'
  | 'skilled_nursing_facility'
  | 'physician_office'
  | 'assisted_living_facility'
  | 'community'
  | 'self_or_family';

export interface ReferralSourcesTable extends TenantRow {
  name: string;
  source_type: ReferralSourceType;
  phone: string | null;
}

interface PersonName {
  first_name: string;
  middle_name: string | null;
  last_name: string;
  suffix: string | null;
}

export interface PhysiciansTable extends TenantRow, PersonName {
  npi: string;
  credential: string | null;
  specialty: string | null;
  phone: string | null;
  fax: string | null;
}

export interface HospitalsTable extends TenantRow {
  name: string;
  city: string | null;
  state: string | null;
}

export type AgencyUserRole = 'marketer' | 'clinician' | 'reviewer';

export interface AgencyUsersTable extends TenantRow {
  role: AgencyUserRole;
  first_name: string;
  last_name: string;
  email: string | null;
  /** Set for clinicians only. */
  discipline: Discipline | null;
  office_id: string | null;
}

export type DocumentKind =
  | 'referral_packet'
  | 'face_to_face'
  | 'history_and_physical'
  | 'medication_list'
  | 'insurance_card'
  | 'physician_order'
  | 'discharge_summary'
  | 'other';

/** Metadata of an uploaded document; the content is stored elsewhere. */
export interface DocumentsTable extends TenantRow {
  kind: DocumentKind;
  file_name: string;
  content_type: string;
  size_bytes: number;
  uploaded_at: Timestamp;
}

export type PatientStatus = 'referred' | 'pending_admission' | 'active' | 'on_hold' | 'discharged' | 'deceased' | 'non_admit';

export interface PatientsTable extends TenantRow, PersonName {
  mrn: string | null;
  dob: string | null;
  gender: Gender | null;
  primary_phone: string | null;
  alt_phone: string | null;
  preferred_phone: 'primary' | 'alternate' | null;
  address_line_1: string | null;
  address_line_2: string | null;
  city: string | null;
  state: string | null;
  zip_code: string | null;
  latitude: string | null;
  longitude: string | null;
  office_id: string | null;
  service_line: ServiceLine;
  status: PatientStatus;
  primary_physician_id: string | null;
  /** Identity-match keys from patientMatchKeys() (src/db/patient-match-keys.ts); dob is matched as is. */
  match_last_name: string;
  match_first_name: string;
  match_phone: string | null;
  /** Copies of the chart's coverages and episodes, written only by triggers (db/migrations/0011_patient_chart_copies.ts). */
  chart_coverages: ColumnType<ChartCoverage[], never, never>;
  chart_episodes: ColumnType<ChartEpisode[], never, never>;
}

export type EpisodeType = 'home_health_period' | 'hospice_benefit_period' | 'private_duty_authorization';
export type EpisodeStatus = 'planned' | 'active' | 'closed';

export interface EpisodesTable extends TenantRow {
  patient_id: string;
  type: EpisodeType;
  status: EpisodeStatus;
  start_date: string;
  end_date: string | null;
}

export interface CoveragesTable extends TenantRow {
  patient_id: string;
  payor_id: string | null;
  plan_name: string | null;
  policy_number: string | null;
  group_number: string | null;
  effective_date: string | null;
  termination_date: string | null;
  /** 0 is primary. */
  coverage_order: number;
  /** Null or '18' (self) when the patient is the policy holder. */
  relationship_to_insured: RelationshipToInsured | null;
  insured_first_name: string | null;
  insured_middle_name: string | null;
  insured_last_name: string | null;
  insured_suffix: string | null;
  insured_dob: string | null;
  insured_gender: Gender | null;
  insured_address_line_1: string | null;
  insured_address_line_2: string | null;
  insured_city: string | null;
  insured_state: string | null;
  insured_zip_code: string | null;
}

/** A coverage in the chart's copy: primary first, with its payor's name; JSON keeps the X12 codes ('18', '01') as text. */
export type ChartCoverage = Omit<Selectable<CoveragesTable>, 'agency_id' | 'patient_id' | 'created_at' | 'updated_at'> & { payor_name: string | null };

/** An episode in the chart's copy, newest first. */
export type ChartEpisode = Pick<Selectable<EpisodesTable>, 'id' | 'type' | 'status' | 'start_date' | 'end_date'>;

export type ReferralTypeCategory = 'soc' | 'roc' | 'other';
export type Disposition = 'accepted' | 'declined';
export type RequestShape = '2026-04-01' | '2026-08-19';

export interface ReferralsTable extends TenantRow {
  patient_id: string | null;
  /** The intake created with it; insert the referral first, then the intake, in one transaction. */
  intake_id: string;
  /** As sent, for leads that never became a chart. */
  patient_display_name: string | null;
  /** As sent. */
  service_line: string;
  /** As sent. */
  referral_type: string | null;
  referral_type_category: ReferralTypeCategory;
  referral_date: Timestamp;
  referral_source: string | null;
  referral_source_id: string | null;
  referring_facility: string | null;
  referring_physician: string | null;
  referring_physician_id: string | null;
  signing_physician_id: string | null;
  certifying_physician_id: string | null;
  payor_id: string | null;
  hospital_id: string | null;
  marketer_id: string | null;
  marketer_label: string | null;
  /** The service ZIP used for territory validation and routing. */
  zip_code: string | null;
  office_id: string | null;
  disposition: Disposition;
  decline_reason: string | null;
  decline_detail: string | null;
  request_shape: RequestShape;
  source_system: string | null;
  external_reference_id: string | null;
  /** Properties of the request beyond the documented ones, kept as sent. */
  additional_fields: JSONColumnType<Record<string, unknown>, string | undefined>;
}

export interface ReferralDocumentsTable {
  agency_id: string;
  referral_id: string;
  document_id: string;
  /** Order of document_ids as sent. */
  position: number;
  created_at: DefaultedTimestamp;
}

export type IntakeStatus =
  | 'pending_review'
  | 'in_review'
  | 'awaiting_information'
  | 'accepted'
  | 'declined'
  | 'admitted'
  | 'non_admit'
  | 'cancelled';

export interface PolicyHolderJson {
  relationship_to_insured: RelationshipToInsured | null;
  first_name: string | null;
  middle_name: string | null;
  last_name: string | null;
  suffix: string | null;
  dob: string | null;
  gender: Gender | null;
  address: { line1: string | null; line2: string | null; city: string | null; state: string | null; zip_code: string | null };
}

/** Coverage sent with a referral, awaiting a reviewer's confirmation (the API's PendingCoverage). */
export interface PendingCoverageJson {
  payor_id: string | null;
  plan_name: string | null;
  other_insurance_name: string | null;
  policy_number: string | null;
  group_number: string | null;
  effective_date: string | null;
  termination_date: string | null;
  coverage_order: number;
  policy_holder: PolicyHolderJson | null;
  policy_holder_confirmed: boolean;
}

export interface DiagnosisJson {
  code: string;
  description?: string;
  is_primary: boolean;
}

export type CustomData = Record<string, string | number | boolean | null>;

export interface IntakesTable extends TenantRow {
  referral_id: string;
  status: IntakeStatus;
  reviewer_id: string | null;
  missing_information: ColumnType<string[], string[] | undefined, string[]>;
  insurance: JSONColumnType<PendingCoverageJson[], string | undefined>;
  insurance_notes: string | null;
  diagnoses: JSONColumnType<DiagnosisJson[], string | undefined>;
  custom_data: JSONColumnType<CustomData, string | undefined>;
  notes: string | null;
  received_at: Timestamp;
}

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

export type TaskStatus = 'open' | 'in_progress' | 'done' | 'cancelled';
export type TaskPriority = 'low' | 'normal' | 'high' | 'urgent';
export type RelatedResourceType =
  | 'patient'
  | 'referral'
  | 'intake'
  | 'visit'
  | 'physician_order'
  | 'remittance'
  | 'working_collection'
  | 'working_collection_row';

export interface TasksTable extends TenantRow {
  title: string;
  description: string | null;
  status: TaskStatus;
  priority: TaskPriority;
  due_date: string | null;
  /** A user id or a role name. */
  assignee_id: string | null;
  related_type: RelatedResourceType | null;
  related_id: string | null;
  related_collection_id: string | null;
  /** Optimistic concurrency: bumped on every change. */
  version: Generated<number>;
  created_by: string;
  /** Set exactly when status is done. */
  completed_at: Timestamp | null;
}

export interface ClinicalTables {
  payors: PayorsTable;
  referral_sources: ReferralSourcesTable;
  physicians: PhysiciansTable;
  hospitals: HospitalsTable;
  agency_users: AgencyUsersTable;
  documents: DocumentsTable;
  patients: PatientsTable;
  episodes: EpisodesTable;
  coverages: CoveragesTable;
  referrals: ReferralsTable;
  referral_documents: ReferralDocumentsTable;
  intakes: IntakesTable;
  visits: VisitsTable;
  tasks: TasksTable;
}
