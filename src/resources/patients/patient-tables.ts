import type { ColumnType, Selectable } from 'kysely';
import type { Gender, PersonName, RelationshipToInsured, ServiceLine, TenantRow } from '../../db/tables/tenant-row.js';

export type PatientStatus =
  | 'referred'
  | 'pending_admission'
  | 'active'
  | 'on_hold'
  | 'discharged'
  | 'deceased'
  | 'non_admit';

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
type EpisodeStatus = 'planned' | 'active' | 'closed';

interface EpisodesTable extends TenantRow {
  patient_id: string;
  type: EpisodeType;
  status: EpisodeStatus;
  start_date: string;
  end_date: string | null;
}

interface CoveragesTable extends TenantRow {
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
export type ChartCoverage = Omit<
  Selectable<CoveragesTable>,
  'agency_id' | 'patient_id' | 'created_at' | 'updated_at'
> & { payor_name: string | null };

/** An episode in the chart's copy, newest first. */
export type ChartEpisode = Pick<Selectable<EpisodesTable>, 'id' | 'type' | 'status' | 'start_date' | 'end_date'>;

export interface PatientTables {
  patients: PatientsTable;
  episodes: EpisodesTable;
  coverages: CoveragesTable;
}
