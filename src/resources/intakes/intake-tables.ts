import type { ColumnType, JSONColumnType } from 'kysely';
import type { Gender, RelationshipToInsured, TenantRow, Timestamp } from '../../db/tables/tenant-row.js';

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
  address: {
    line1: string | null;
    line2: string | null;
    city: string | null;
    state: string | null;
    zip_code: string | null;
  };
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

type CustomData = Record<string, string | number | boolean | null>;

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

export interface IntakeTables {
  intakes: IntakesTable;
}
