import type { Selectable } from 'kysely';
import { reusableTenantQuery, type TenantStore } from '../../db/tenant-store.js';
import type { Disposition, ReferralsTable, ReferralTypeCategory } from './referral-tables.js';
import type { CursorSealer } from '../../db/cursor-sealer.js';
import { listPage, type ListOrder, type Page, type ListQuery } from '../../db/paging.js';

interface ReferralFilters {
  disposition?: Disposition;
  referral_type?: ReferralTypeCategory;
  /** Inclusive calendar days ('YYYY-MM-DD'), in UTC. */
  referral_date_from?: string;
  referral_date_to?: string;
  referral_source_id?: string;
  patient_id?: string;
}

export type ReferralRow = Selectable<ReferralsTable>;

/** Newest referral first, served by the referrals_*_idx indexes. */
const NEWEST_FIRST: ListOrder = { columns: ['referral_date', 'id'], direction: 'desc' };

const SUMMARY_COLUMNS = [
  'id',
  'patient_id',
  'intake_id',
  'service_line',
  'referral_type',
  'referral_type_category',
  'referral_date',
  'referral_source',
  'referral_source_id',
  'disposition',
  'decline_reason',
  'office_id',
  'patient_display_name',
  'created_at',
] as const;

export type ReferralSummaryRow = Pick<ReferralRow, (typeof SUMMARY_COLUMNS)[number]>;

const utcDayStart = (day: string) => new Date(`${day}T00:00:00.000Z`);
const utcDayAfter = (day: string) => new Date(utcDayStart(day).getTime() + 86_400_000);

export async function listReferralSummaries(
  store: TenantStore,
  filters: ReferralFilters,
  page: ListQuery,
  cursors: CursorSealer,
): Promise<Page<ReferralSummaryRow>> {
  let query = store.selectFrom('referrals').select(SUMMARY_COLUMNS);
  if (filters.disposition) query = query.where('disposition', '=', filters.disposition);
  if (filters.referral_type) query = query.where('referral_type_category', '=', filters.referral_type);
  if (filters.referral_date_from) query = query.where('referral_date', '>=', utcDayStart(filters.referral_date_from));
  if (filters.referral_date_to) query = query.where('referral_date', '<', utcDayAfter(filters.referral_date_to));
  if (filters.referral_source_id) query = query.where('referral_source_id', '=', filters.referral_source_id);
  if (filters.patient_id) query = query.where('patient_id', '=', filters.patient_id);
  return listPage(store, query, NEWEST_FIRST, page, cursors);
}

export function findReferral(store: TenantStore, id: string): Promise<ReferralRow | undefined> {
  return store.selectFrom('referrals').selectAll().where('id', '=', id).executeTakeFirst();
}

const referralWithIntake = reusableTenantQuery('referral-with-intake', ['id'], (store, p) =>
  store
    .selectFrom('referrals')
    .innerJoin('intakes', (join) => join.on(store.ofAgency('intakes')).onRef('intakes.id', '=', 'referrals.intake_id'))
    .select(SUMMARY_COLUMNS.map((column) => `referrals.${column}` as const))
    .select([
      'intakes.status as intake_status',
      'intakes.reviewer_id',
      'intakes.missing_information',
      'intakes.received_at',
      'intakes.updated_at as intake_updated_at',
    ])
    .where('referrals.id', '=', p.id),
);

/**
 * A referral (as its list shows it) and the intake it opened (as the intake list shows it), in one prepared read.
 * For the command that filed them: its audit record names both already.
 */
export async function findReferralWithIntake(store: TenantStore, referralId: string) {
  const [row] = await referralWithIntake(store, { id: referralId });
  if (!row) throw new Error(`referral ${referralId} was not found in its own command`);
  const intake = {
    id: row.intake_id!,
    referral_id: row.id,
    patient_id: row.patient_id,
    status: row.intake_status,
    service_line: row.service_line,
    disposition: row.disposition,
    office_id: row.office_id,
    reviewer_id: row.reviewer_id,
    missing_information: row.missing_information,
    received_at: row.received_at,
    updated_at: row.intake_updated_at,
  };
  return { referral: row, intake };
}

/** Documents linked onto a referral, in the order the sender listed them. */
export async function referralDocumentIds(store: TenantStore, referralId: string): Promise<string[]> {
  const rows = await store
    .selectFrom('referral_documents')
    .select('document_id')
    .where('referral_id', '=', referralId)
    .orderBy('position')
    .execute();
  return rows.map((r) => r.document_id);
}
