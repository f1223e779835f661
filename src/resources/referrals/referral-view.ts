import type { components } from '../../generated/openapi.js';
import type { ReferralRow, ReferralSummaryRow } from './referral-repository.js';

type ReferralSummary = components['schemas']['ReferralSummary'];
type ReferralDetail = components['schemas']['ReferralDetail'];

export function referralSummary(row: ReferralSummaryRow): ReferralSummary {
  return {
    id: row.id,
    patient_id: row.patient_id,
    intake_id: row.intake_id,
    service_line: row.service_line,
    referral_type: row.referral_type,
    referral_type_category: row.referral_type_category,
    referral_date: row.referral_date.toISOString(),
    referral_source: row.referral_source,
    referral_source_id: row.referral_source_id,
    disposition: row.disposition,
    decline_reason: row.decline_reason,
    office_id: row.office_id,
    patient_display_name: row.patient_display_name,
    created_at: row.created_at.toISOString(),
  };
}

export function referralDetail(row: ReferralRow, documentIds: string[]): ReferralDetail {
  return {
    ...referralSummary(row),
    decline_detail: row.decline_detail,
    request_shape: row.request_shape,
    zip_code: row.zip_code,
    referring_facility: row.referring_facility,
    referring_physician: row.referring_physician,
    referring_physician_id: row.referring_physician_id,
    signing_physician_id: row.signing_physician_id,
    certifying_physician_id: row.certifying_physician_id,
    payor_id: row.payor_id,
    hospital_id: row.hospital_id,
    marketer_id: row.marketer_id,
    marketer_label: row.marketer_label,
    document_ids: documentIds,
    source_system: row.source_system,
    external_reference_id: row.external_reference_id,
    additional_fields: row.additional_fields,
  };
}
