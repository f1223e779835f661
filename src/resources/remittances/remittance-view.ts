import type { components } from '../../generated/openapi.js';
import { lastFour } from '../../domain/deidentify.js';
import {
  ADJUSTMENT_GROUPS,
  CLAIM_STATUSES,
  formatCents,
  type AdjustmentGroup,
  type ClaimStatusCode,
} from '../../domain/era/era-values.js';
import type { AllocationRow, ProviderAdjustmentRow, RemittanceRow } from './remittance-repository.js';

type Remittance = components['schemas']['Remittance'];
type Allocation = components['schemas']['Allocation'];
type AllocationSummary = components['schemas']['AllocationSummary'];

export function remittanceView(row: RemittanceRow): Remittance {
  return {
    id: row.id,
    era_file_id: row.era_file_id,
    payer_name: row.payer_name,
    payer_id: row.payer_id,
    payee_name: row.payee_name,
    payee_id: row.payee_id,
    payment_amount: row.payment_amount,
    credit_debit: row.credit_debit === 'D' ? 'debit' : 'credit',
    payment_method: row.payment_method,
    payment_date: row.payment_date,
    check_or_eft_number: lastFour(row.trace_number),
    status: row.status,
    claim_count: row.claim_count,
    paid_amount: row.paid_amount,
    provider_adjustment_amount: row.provider_adjustment_amount,
    received_at: row.created_at.toISOString(),
  };
}

function patientName(row: AllocationRow): string | null {
  const given = [row.patient_first_name, row.patient_middle_name].filter(Boolean).join(' ');
  if (!row.patient_last_name) return given || null;
  return given ? `${row.patient_last_name}, ${given}` : row.patient_last_name;
}

export function allocationView(row: AllocationRow): Allocation {
  return {
    id: row.id,
    remittance_id: row.remittance_id,
    claim_id: row.patient_control_number,
    payer_claim_number: row.payer_claim_number,
    original_payer_claim_number: row.original_payer_claim_number,
    claim_status_code: row.claim_status_code as ClaimStatusCode,
    claim_status: CLAIM_STATUSES[row.claim_status_code as ClaimStatusCode],
    claim_filing_indicator: row.claim_filing_indicator,
    patient_id: row.patient_id,
    patient_name: patientName(row),
    member_id: row.member_id,
    service_date_from: row.service_date_from,
    service_date_to: row.service_date_to,
    charged_amount: row.charged_amount,
    allowed_amount: row.allowed_amount,
    paid_amount: row.paid_amount,
    adjustment_amount: row.adjustment_amount,
    patient_responsibility_amount: row.patient_responsibility_amount,
    variance_amount: row.variance_amount,
    adjustment_codes: row.adjustment_codes.map((a) => ({
      code: `${a.group}-${a.reason}`,
      group_code: a.group as AdjustmentGroup,
      reason_code: a.reason,
      amount: a.amount,
    })),
    match_status: row.match_status,
  };
}

const ZERO = formatCents(0);
const byGroup = (stored: Record<string, string>) =>
  Object.fromEntries(ADJUSTMENT_GROUPS.map((g) => [g, stored[g] ?? ZERO])) as Record<AdjustmentGroup, string>;

/** The payment's totals; an unknown remittance (or another agency's) has zeros. */
export function allocationSummary(
  row: RemittanceRow | undefined,
  adjustments: ProviderAdjustmentRow[],
): AllocationSummary {
  const signed =
    row && (row.credit_debit === 'D' && row.payment_amount !== ZERO ? `-${row.payment_amount}` : row.payment_amount);
  return {
    claim_count: row?.claim_count ?? 0,
    charged_amount: row?.charged_amount ?? ZERO,
    allowed_amount: row?.allowed_amount ?? ZERO,
    paid_amount: row?.paid_amount ?? ZERO,
    adjustment_amount: row?.adjustment_amount ?? ZERO,
    patient_responsibility_amount: row?.patient_responsibility_amount ?? ZERO,
    variance_amount: row?.variance_amount ?? ZERO,
    adjustments_by_group: byGroup(row?.adjustments_by_group ?? {}),
    payment_amount: signed ?? null,
    provider_adjustment_amount: row?.provider_adjustment_amount ?? ZERO,
    provider_adjustments: adjustments.map((a) => ({
      provider_id: a.provider_id,
      fiscal_period_date: a.fiscal_period_date,
      reason_code: a.reason_code,
      reference: a.reference,
      amount: a.amount,
    })),
  };
}
