import { resourceNotFound, type Handler, type QueryParams } from '../handler.js';
import type { TenantStore } from '../../db/tenant-store.js';
import { findReferral, listReferralSummaries, referralDocumentIds } from './referral-repository.js';
import { referralDetail, referralSummary } from './referral-view.js';
import { checkYearBoundary } from '../phi-view.js';

/** Whole days in UTC; in a no_phi session whole years (from January 1, to December 31). */
function checkDateRange(store: TenantStore, query: QueryParams<'listReferrals'>): void {
  const { referral_date_from: from, referral_date_to: to } = query;
  if (from !== undefined) checkYearBoundary(store, 'referral_date_from', from, `${from.slice(0, 4)}-01-01`);
  if (to !== undefined) checkYearBoundary(store, 'referral_date_to', to, `${to.slice(0, 4)}-12-31`);
}

export const listReferrals: Handler<'listReferrals'> = async (ctx) => {
  const { query, store } = ctx;
  checkDateRange(store, query);
  const { rows, meta } = await listReferralSummaries(store, query, query, ctx.cursors);
  return { data: rows.map(referralSummary), meta };
};

export const getReferral: Handler<'getReferral'> = async (ctx) => {
  const { store, params } = ctx;
  const [row, documentIds] = await Promise.all([findReferral(store, params.id), referralDocumentIds(store, params.id)]);
  if (!row) throw resourceNotFound('referral', params.id);
  return { data: referralDetail(row, documentIds) };
};
