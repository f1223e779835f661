import type { Handler } from '../handler.js';
import { paging } from '../../generated/contract.js';
import {
  findRemittance,
  listAllocationPage,
  listProviderAdjustments,
  listRemittancePage,
} from './remittance-repository.js';
import { allocationSummary, allocationView, remittanceView } from './remittance-view.js';

export const listRemittances: Handler<'listRemittances'> = async (ctx) => {
  const { status, era_file_id: eraFileId } = ctx.query;
  const { rows, meta } = await listRemittancePage(ctx.store, { status, eraFileId }, ctx.query, ctx.cursors);
  return { data: rows.map(remittanceView), meta };
};

/**
 * `listRemittanceAllocations`: an unknown remittance, another agency's, or one with only provider-level
 * adjustments is an empty page with total 0, never a 404.
 */
export const listRemittanceAllocations: Handler<'listRemittanceAllocations'> = async (ctx) => {
  // Looked up first: an unknown id answers the same with or without a cursor, whoever issued it.
  const remittance = await findRemittance(ctx.store, ctx.params.id);
  if (!remittance) {
    const limit = ctx.query.limit ?? paging.default_limit;
    const empty = {
      total: 0,
      total_exact: true,
      limit,
      offset: ctx.query.offset ?? 0,
      has_more: false,
      next_offset: null,
      next_cursor: null,
    };
    return { data: [], meta: { ...empty, summary: allocationSummary(undefined, []) } };
  }
  const [{ rows, meta }, adjustments] = await Promise.all([
    listAllocationPage(ctx.store, remittance.id, ctx.query, ctx.cursors),
    listProviderAdjustments(ctx.store, remittance.id),
  ]);
  return { data: rows.map(allocationView), meta: { ...meta, summary: allocationSummary(remittance, adjustments) } };
};
