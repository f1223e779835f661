import { resourceNotFound, type Handler, type QueryParams } from '../handler.js';
import { paging } from '../../generated/contract.js';
import { invalidInput } from '../../shared/platform-error.js';
import type { PhiMode } from '../../shared/principal.js';
import type { AgingBucket } from '../../domain/physician-orders/aging.js';
import { findOrder, listOrderPage, type OrderFilters } from './physician-order-repository.js';
import { physicianOrder } from './physician-order-view.js';
import type { OrderType, SignatureStatus } from './physician-order-tables.js';

const NO_PHI_AS_OF_MS = 24 * 3_600_000;

/** The earliest as_of: a year back, or 24 hours in no_phi sessions, where the day an order changes bucket is its sent date. */
function earliestAsOf(now: Date, phiMode: PhiMode): Date {
  if (phiMode === 'no_phi') return new Date(now.getTime() - NO_PHI_AS_OF_MS);
  const earliest = new Date(now);
  earliest.setUTCFullYear(now.getUTCFullYear() - 1);
  return earliest;
}

/** The instant aging is counted at: as_of within the past year (24 hours in no_phi sessions), or now. */
function agingInstant(asOf: string | undefined, phiMode: PhiMode): Date {
  const now = new Date();
  if (asOf === undefined) return now;
  const at = new Date(asOf);
  const earliest = earliestAsOf(now, phiMode);
  if (at < earliest || at > now) {
    const within = phiMode === 'no_phi' ? 'the past 24 hours in a no_phi session' : 'the past year';
    throw invalidInput(
      'as_of',
      `as_of must be within ${within}, from ${earliest.toISOString()} to now (${now.toISOString()}); it was ${asOf}.`,
      {
        earliest: earliest.toISOString(),
        latest: now.toISOString(),
      },
    );
  }
  return at;
}

/** Pages of this list start at multiples of the page size. */
function checkOffset({ limit = paging.default_limit, offset = 0 }: { limit?: number; offset?: number }): void {
  if (offset % limit === 0) return;
  const previous = offset - (offset % limit);
  const next = previous + limit <= paging.max_offset ? previous + limit : null;
  const nearest = next === null ? `${previous}` : `${previous} or ${next}`;
  throw invalidInput(
    'offset',
    `offset must be a multiple of limit (${limit}) on this list; ${offset} is not: send ${nearest}.`,
    {
      limit,
      offset,
      previous_valid_offset: previous,
      next_valid_offset: next,
    },
  );
}

function listOf<T extends string>(value: string | undefined): T[] | undefined {
  return value === undefined ? undefined : ([...new Set(value.split(','))] as T[]);
}

function orderFilters(query: QueryParams<'listPhysicianOrders'>): OrderFilters {
  return {
    statuses: listOf<SignatureStatus>(query.status),
    orderTypes: listOf<OrderType>(query.order_type),
    agingBuckets: listOf<AgingBucket>(query.aging_bucket),
    slaBreached: query.sla_breached,
    physicianId: query.physician_id,
    patientId: query.patient_id,
  };
}

export const listPhysicianOrders: Handler<'listPhysicianOrders'> = async (ctx) => {
  const asOf = agingInstant(ctx.query.as_of, ctx.store.phiMode);
  checkOffset(ctx.query);
  const filters = orderFilters(ctx.query);
  const { rows, meta, summary } = await listOrderPage(ctx.store, filters, asOf, ctx.query, ctx.cursors);
  return { data: rows.map((row) => physicianOrder(row, asOf)), meta: { ...meta, as_of: asOf.toISOString(), summary } };
};

export const getPhysicianOrder: Handler<'getPhysicianOrder'> = async (ctx) => {
  const asOf = agingInstant(ctx.query.as_of, ctx.store.phiMode);
  const row = await findOrder(ctx.store, ctx.params.id, asOf);
  if (!row) throw resourceNotFound('physician order', ctx.params.id);
  return { data: physicianOrder(row, asOf), meta: { as_of: asOf.toISOString() } };
};
