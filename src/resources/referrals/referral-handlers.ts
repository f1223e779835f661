import type { components } from '../../generated/openapi.js';
import { resourceNotFound, type Handler, type QueryParams } from '../handler.js';
import { findReferral, listReferralSummaries, referralDocumentIds, type ReferralRow, type ReferralSummaryRow } from './referral-repository.js';
import { checkYearBoundary, patientIdFilter, type SessionContext } from '../phi-view.js';

type ReferralSummary = components['schemas']['ReferralSummary'];
type ReferralDetail = components['schemas']['ReferralDetail'];

function referralSummary(row: ReferralSummaryRow): ReferralSummary {
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

function referralDetail(row: ReferralRow, documentIds: string[]): ReferralDetail {
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

/** Whole days in UTC; in a no_phi session whole years (from January 1, to December 31). */
function checkDateRange(ctx: SessionContext, query: QueryParams<'listReferrals'>): void {
  const { referral_date_from: from, referral_date_to: to } = query;
  if (from !== undefined) checkYearBoundary(ctx, 'referral_date_from', from, `${from.slice(0, 4)}-01-01`);
  if (to !== undefined) checkYearBoundary(ctx, 'referral_date_to', to, `${to.slice(0, 4)}-12-31`);
}

export const listReferrals: Handler<'listReferrals'> = async (ctx) => {
  const { query, principal } = ctx;
  checkDateRange(ctx, query);
  const filters = { ...query, patient_id: await patientIdFilter(ctx, query.patient_id) };
  const { rows, meta } = await listReferralSummaries(ctx.db, principal.agencyId, filters, query, ctx.cursors);
  ctx.audit.resourceIds = rows.map((r) => r.id);
  return { data: rows.map(referralSummary), meta };
};

export const getReferral: Handler<'getReferral'> = async (ctx) => {
  const { agencyId } = ctx.principal;
  const [row, documentIds] = await Promise.all([findReferral(ctx.db, agencyId, ctx.params.id), referralDocumentIds(ctx.db, agencyId, ctx.params.id)]);
  if (!row) throw resourceNotFound('referral', ctx.params.id);
  ctx.audit.resourceIds = [row.id];
  return { data: referralDetail(row, documentIds) };
};
