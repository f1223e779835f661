import type { TenantStore } from '../../db/tenant-store.js';
import type { IntakeStatus } from './intake-tables.js';
import type { CursorSealer } from '../../db/cursor-sealer.js';
import { listPage, type ListOrder, type Page, type ListQuery } from '../../db/paging.js';

interface IntakeFilters {
  status?: IntakeStatus;
  referral_id?: string;
  patient_id?: string;
}

/** Newest first, served by the intakes_received and intakes_status indexes. */
const NEWEST_FIRST: ListOrder = { columns: ['intakes.received_at', 'intakes.id'], direction: 'desc' };

// The patient, business line, decision and office of an intake are its referral's.
const SUMMARY_COLUMNS = [
  'intakes.id',
  'intakes.referral_id',
  'referrals.patient_id',
  'intakes.status',
  'referrals.service_line',
  'referrals.disposition',
  'referrals.office_id',
  'intakes.reviewer_id',
  'intakes.missing_information',
  'intakes.received_at',
  'intakes.updated_at',
] as const;

const DETAIL_COLUMNS = [
  ...SUMMARY_COLUMNS,
  'referrals.decline_reason',
  'referrals.decline_detail',
  'intakes.insurance',
  'intakes.insurance_notes',
  'intakes.diagnoses',
  'intakes.custom_data',
  'intakes.notes',
] as const;

/** Intakes of one agency joined to their referrals. */
function intakesOf(store: TenantStore) {
  return store
    .selectFrom('intakes')
    .innerJoin('referrals', (join) =>
      join.on(store.ofAgency('referrals')).onRef('referrals.id', '=', 'intakes.referral_id'),
    );
}

export async function listIntakeSummaries(
  store: TenantStore,
  filters: IntakeFilters,
  page: ListQuery,
  cursors: CursorSealer,
) {
  let query = intakesOf(store).select(SUMMARY_COLUMNS);
  if (filters.status) query = query.where('intakes.status', '=', filters.status);
  if (filters.referral_id) query = query.where('intakes.referral_id', '=', filters.referral_id);
  if (filters.patient_id) query = query.where('referrals.patient_id', '=', filters.patient_id);
  return listPage(store, query, NEWEST_FIRST, page, cursors);
}

export type IntakeSummaryRow = Awaited<ReturnType<typeof listIntakeSummaries>> extends Page<infer Row> ? Row : never;

export function findIntakeDetail(store: TenantStore, id: string) {
  return intakesOf(store).select(DETAIL_COLUMNS).where('intakes.id', '=', id).executeTakeFirst();
}

export type IntakeDetailRow = NonNullable<Awaited<ReturnType<typeof findIntakeDetail>>>;
