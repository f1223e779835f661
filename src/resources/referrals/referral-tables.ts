import type { JSONColumnType } from 'kysely';
import type { DefaultedTimestamp, TenantRow, Timestamp } from '../../db/tables/tenant-row.js';

export type ReferralTypeCategory = 'soc' | 'roc' | 'other';
export type Disposition = 'accepted' | 'declined';
type RequestShape = '2026-04-01' | '2026-08-19';

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

interface ReferralDocumentsTable {
  agency_id: string;
  referral_id: string;
  document_id: string;
  /** Order of document_ids as sent. */
  position: number;
  created_at: DefaultedTimestamp;
}

export interface ReferralTables {
  referrals: ReferralsTable;
  referral_documents: ReferralDocumentsTable;
}
