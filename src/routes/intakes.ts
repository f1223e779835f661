import type { components } from '../generated/openapi.js';
import { resourceNotFound, type Handler } from './handler.js';
import type { PendingCoverageJson } from '../db/tables/clinical.js';
import { findIntakeDetail, listIntakeSummaries, type IntakeDetailRow, type IntakeSummaryRow } from '../db/repositories/intakes.js';
import { referralDocumentIds } from '../db/repositories/referrals.js';
import { patientIdFilter, phiView, policyHolderFor, type PhiView } from './phi-view.js';

type IntakeSummary = components['schemas']['IntakeSummary'];
type IntakeDetail = components['schemas']['IntakeDetail'];
type PendingCoverage = components['schemas']['PendingCoverage'];

function intakeSummary(row: IntakeSummaryRow, view: PhiView): IntakeSummary {
  return {
    id: row.id,
    referral_id: row.referral_id,
    patient_id: view.patientId(row.patient_id),
    status: row.status,
    service_line: row.service_line,
    disposition: row.disposition,
    office_id: row.office_id,
    reviewer_id: row.reviewer_id,
    missing_information: row.missing_information,
    received_at: view.instant(row.received_at),
    updated_at: view.instant(row.updated_at),
  };
}

/** Policy and group numbers identify the holder and their employer, so no_phi withholds them. */
function pendingCoverage(coverage: PendingCoverageJson, view: PhiView): PendingCoverage {
  return {
    payor_id: coverage.payor_id,
    plan_name: coverage.plan_name,
    other_insurance_name: coverage.other_insurance_name,
    policy_number: view.identifying(coverage.policy_number),
    group_number: view.identifying(coverage.group_number),
    effective_date: view.date(coverage.effective_date),
    termination_date: view.date(coverage.termination_date),
    coverage_order: coverage.coverage_order,
    is_primary: coverage.coverage_order === 0,
    policy_holder: policyHolderFor(view, coverage.policy_holder),
    policy_holder_confirmed: coverage.policy_holder_confirmed,
  };
}

function intakeDetail(row: IntakeDetailRow, documentIds: string[], view: PhiView): IntakeDetail {
  return {
    ...intakeSummary(row, view),
    decline_reason: row.decline_reason,
    // An out-of-area decline names the lead's ZIP and city.
    decline_detail: view.identifying(row.decline_detail),
    insurance: row.insurance.map((coverage) => pendingCoverage(coverage, view)),
    insurance_notes: view.identifying(row.insurance_notes),
    diagnoses: row.diagnoses,
    document_ids: documentIds,
    custom_data: view.noPhi ? {} : row.custom_data,
    notes: view.identifying(row.notes),
  };
}

export const listIntakes: Handler<'listIntakes'> = async (ctx) => {
  const { query, principal } = ctx;
  const filters = { ...query, patient_id: await patientIdFilter(ctx, query.patient_id) };
  const { rows, meta } = await listIntakeSummaries(ctx.db, principal.agencyId, filters, query, ctx.cursors);
  const view = await phiView(ctx, rows.map((r) => r.patient_id));
  ctx.audit.resourceIds = rows.map((r) => r.id);
  return { data: rows.map((r) => intakeSummary(r, view)), meta };
};

export const getIntake: Handler<'getIntake'> = async (ctx) => {
  const { agencyId } = ctx.principal;
  const row = await findIntakeDetail(ctx.db, agencyId, ctx.params.id);
  if (!row) throw resourceNotFound('intake', ctx.params.id);
  ctx.audit.resourceIds = [row.id];
  const documentIds = await referralDocumentIds(ctx.db, agencyId, row.referral_id);
  return { data: intakeDetail(row, documentIds, await phiView(ctx, [row.patient_id])) };
};
