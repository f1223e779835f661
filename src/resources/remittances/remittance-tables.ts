import type { ColumnType } from 'kysely';
import type { TenantRow } from '../../db/tables/tenant-row.js';

/** numeric(14, 2) columns: exact decimal strings when read, strings when written. */
type Money = ColumnType<string, string, string>;
type DefaultedMoney = ColumnType<string, string | undefined, string>;
/** jsonb written as JSON text (see tenant-row.ts). */
type Json<T> = ColumnType<T, string, string>;

export type RemittanceStatus = 'received' | 'posted' | 'reconciled' | 'exception';
type AllocationMatchStatus = 'matched' | 'partially_matched' | 'unmatched';

/** An adjustment as stored: group, CARC and amount (a decimal string). */
interface StoredAdjustment {
  group: string;
  reason: string;
  amount: string;
}

/** db/migrations/0018_remittances.ts. */
export interface EraFilesTable extends TenantRow {
  file_name: string;
  sha256: string;
  byte_size: ColumnType<number, number, number>;
  interchange_control_number: string;
  sender_id: string;
  receiver_id: string;
  payment_count: ColumnType<number, number | undefined, number>;
  claim_count: ColumnType<number, number | undefined, number>;
}

export interface RemittancesTable extends TenantRow {
  era_file_id: string;
  transaction_control_number: string;
  payer_name: string;
  payer_id: string | null;
  payee_name: string;
  payee_id: string | null;
  /** TRN03 and TRN02: the trace number is unique within its originator. */
  trace_originator: string;
  trace_number: string;
  credit_debit: 'C' | 'D';
  payment_amount: Money;
  payment_method: 'ACH' | 'BOP' | 'CHK' | 'FWT' | 'NON';
  payment_date: string;
  production_date: string | null;
  status: ColumnType<RemittanceStatus, RemittanceStatus | undefined, RemittanceStatus>;
  claim_count: ColumnType<number, number | undefined, number>;
  charged_amount: DefaultedMoney;
  allowed_amount: DefaultedMoney;
  paid_amount: DefaultedMoney;
  adjustment_amount: DefaultedMoney;
  patient_responsibility_amount: DefaultedMoney;
  variance_amount: DefaultedMoney;
  /** Adjustment totals by group code (CO, CR, OA, PI, PR), as decimal strings. */
  adjustments_by_group: ColumnType<Record<string, string>, string | undefined, string>;
  provider_adjustment_amount: DefaultedMoney;
}

export interface RemittanceAllocationsTable extends TenantRow {
  remittance_id: string;
  /** Order of the claim in its payment. */
  position: number;
  patient_control_number: string;
  claim_status_code: string;
  payer_claim_number: string | null;
  original_payer_claim_number: string | null;
  claim_filing_indicator: string | null;
  patient_last_name: string | null;
  patient_first_name: string | null;
  patient_middle_name: string | null;
  member_id: string | null;
  patient_id: string | null;
  match_status: AllocationMatchStatus;
  service_date_from: string | null;
  service_date_to: string | null;
  charged_amount: Money;
  allowed_amount: Money;
  paid_amount: Money;
  adjustment_amount: Money;
  patient_responsibility_amount: Money;
  variance_amount: Money;
  adjustment_codes: Json<StoredAdjustment[]>;
}

export interface RemittanceProviderAdjustmentsTable {
  agency_id: string;
  remittance_id: string;
  position: number;
  provider_id: string;
  fiscal_period_date: string;
  reason_code: string;
  reference: string | null;
  amount: Money;
}

export interface RemittanceTables {
  era_files: EraFilesTable;
  remittances: RemittancesTable;
  remittance_allocations: RemittanceAllocationsTable;
  remittance_provider_adjustments: RemittanceProviderAdjustmentsTable;
}
