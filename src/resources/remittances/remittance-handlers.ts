import type { Handler } from '../handler.js';
import { paging } from '../../generated/contract.js';
import { findRemittance, listAllocationPage, listProviderAdjustments, listRemittancePage } from './remittance-repository.js';
import { allocationSummary, allocationView, remittanceView } from './remittance-view.js';

export const listRemittances: Handler<'listRemittances'> = async (ctx) => {
  const { status, era_file_id: eraFileId } = ctx.query;
  const { rows, meta } = await listRemittancePage(ctx.store, { status, eraFileId }, ctx.query, ctx.cursors);
  return { data: rows.map(remittanceView), meta };
};

/**
 * Spec route 21: an unknown remittance, another agency's, or one with only provider-level adjustments is an empty page
 * with total 0, never a 404.
 */
export const listRemittanceAllocations: Handler<'listRemittanceAllocations'> = async (ctx) => {
  // In parallel: an unknown id (or another agency's) finds no allocations and no adjustments either.
  const [remittance, { rows, meta }, adjustments] = await Promise.all([
    findRemittance(ctx.store, ctx.params.id),
    listAllocationPage(ctx.store, ctx.params.id, ctx.query, ctx.cursors),
    listProviderAdjustments(ctx.store, ctx.params.id),
  ]);
  if (!remittance) {
    const limit = ctx.query.limit ?? paging.default_limit;
    const empty = { total: 0, total_exact: true, limit, offset: ctx.query.offset ?? 0, has_more: false, next_offset: null, next_cursor: null };
    return { data: [], meta: { ...empty, summary: allocationSummary(undefined, []) } };
  }
  return { data: rows.map(allocationView), meta: { ...meta, summary: allocationSummary(remittance, adjustments) } };
};
