import type { Discipline, PersonName, TenantRow, Timestamp } from './tenant-row.js';

/** The agency's directory that requests refer to by id: payors, referral sources, physicians, hospitals, users, documents. */

export type PayorType =
  | 'medicare'
  | 'medicaid'
  | 'medicare_advantage'
  | 'managed_medicaid'
  | 'commercial'
  | 'private_pay';

interface PayorsTable extends TenantRow {
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

interface ReferralSourcesTable extends TenantRow {
  name: string;
  source_type: ReferralSourceType;
  phone: string | null;
}

interface PhysiciansTable extends TenantRow, PersonName {
  npi: string;
  credential: string | null;
  specialty: string | null;
  phone: string | null;
  fax: string | null;
}

interface HospitalsTable extends TenantRow {
  name: string;
  city: string | null;
  state: string | null;
}

export type AgencyUserRole = 'marketer' | 'clinician' | 'reviewer';

interface AgencyUsersTable extends TenantRow {
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
interface DocumentsTable extends TenantRow {
  kind: DocumentKind;
  file_name: string;
  content_type: string;
  size_bytes: number;
  uploaded_at: Timestamp;
}

export interface AgencyDirectoryTables {
  payors: PayorsTable;
  referral_sources: ReferralSourcesTable;
  physicians: PhysiciansTable;
  hospitals: HospitalsTable;
  agency_users: AgencyUsersTable;
  documents: DocumentsTable;
}
