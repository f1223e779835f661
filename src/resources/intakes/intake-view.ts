import type { components } from '../../generated/openapi.js';
import type { PendingCoverageJson } from './intake-tables.js';
import type { IntakeDetailRow, IntakeSummaryRow } from './intake-repository.js';

type IntakeSummary = components['schemas']['IntakeSummary'];
type IntakeDetail = components['schemas']['IntakeDetail'];
type PendingCoverage = components['schemas']['PendingCoverage'];

export function intakeSummary(row: IntakeSummaryRow): IntakeSummary {
  return {
    id: row.id,
    referral_id: row.referral_id,
    patient_id: row.patient_id,
    status: row.status,
    service_line: row.service_line,
    disposition: row.disposition,
    office_id: row.office_id,
    reviewer_id: row.reviewer_id,
    missing_information: row.missing_information,
    received_at: row.received_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

function pendingCoverage(coverage: PendingCoverageJson): PendingCoverage {
  return {
    payor_id: coverage.payor_id,
    plan_name: coverage.plan_name,
    other_insurance_name: coverage.other_insurance_name,
    policy_number: coverage.policy_number,
    group_number: coverage.group_number,
    effective_date: coverage.effective_date,
    termination_date: coverage.termination_date,
    coverage_order: coverage.coverage_order,
    is_primary: coverage.coverage_order === 0,
    policy_holder: coverage.policy_holder,
    policy_holder_confirmed: coverage.policy_holder_confirmed,
  };
}

export function intakeDetail(row: IntakeDetailRow, documentIds: string[]): IntakeDetail {
  return {
    ...intakeSummary(row),
    decline_reason: row.decline_reason,
    decline_detail: row.decline_detail,
    insurance: row.insurance.map(pendingCoverage),
    insurance_notes: row.insurance_notes,
    diagnoses: row.diagnoses,
    document_ids: documentIds,
    custom_data: row.custom_data,
    notes: row.notes,
  };
}
