import { sql, type SelectQueryBuilder } from 'kysely';
import { paging } from '../generated/contract.js';
import { PlatformError } from '../shared/platform-error.js';
import type { CursorSealer, CursorSelection } from './cursor-sealer.js';
import type { TenantStore } from './tenant-store.js';

/** Paging parameters of every list route (x-svc-paging): limit/offset, or a keyset cursor from meta.next_cursor. */
interface PageRequest {
  limit?: number;
  offset?: number;
  cursor?: string;
}

/** A list's query as the route received it: its paging parameters and its filters, to which its cursors are bound. */
export type ListQuery = PageRequest & CursorSelection;

/**
 * A list's total order: columns (qualified when the query joins) that end in a unique id, all in one
 * direction, so a page boundary is one row-value comparison served by the list's index.
 */
export interface ListOrder {
  columns: readonly string[];
  direction: 'asc' | 'desc';
}

// A type alias, not an interface, so it fits the generated Meta type's index signature.
type ListMeta = {
  total: number;
  total_exact: boolean;
  limit: number;
  offset: number;
  has_more: boolean;
  next_offset: number | null;
  next_cursor: string | null;
};

export interface Page<Row> {
  rows: Row[];
  meta: ListMeta;
}

type CursorValue = string | number;

/** A list's total, and whether it is the exact count of the matches or the planner's estimate of it. */
interface Total {
  total: number;
  exact: boolean;
}

/** What a cursor carries: the last row's order values, the position after it, and the walk's total. */
interface CursorState extends Total {
  after: CursorValue[];
  offset: number;
}

const cursorMismatch = () =>
  new PlatformError(
    'PLATFORM_INVALID_INPUT',
    'cursor is not one this list returned to this integration, in this PHI mode, for these filters; send back meta.next_cursor unchanged, with the same filters.',
    { field: 'cursor' },
  );

/**
 * The filters a cursor is bound to: every query parameter but the paging ones. The page size may change from
 * page to page; offset and cursor are the position, which the cursor itself carries.
 */
function filtersOf({ limit, offset, cursor, ...filters }: ListQuery): CursorSelection {
  return filters;
}

/** Sealed, so that no caller can read the row values it carries (names, dates, real ids) or forge one. */
function encodeCursor(
  cursors: CursorSealer,
  filters: CursorSelection,
  order: ListOrder,
  state: CursorState,
): Promise<string> {
  return cursors.seal([order.columns.join(','), state.after, state.offset, state.total, state.exact], filters);
}

async function decodeCursor(
  cursors: CursorSealer,
  filters: CursorSelection,
  cursor: string,
  order: ListOrder,
): Promise<CursorState> {
  const opened = await cursors.open(cursor, filters);
  // Cursors sealed before totals could be estimates carry no flag: their totals were exact counts.
  const [list, after, offset, total, exact = true] = Array.isArray(opened) ? opened : [];
  const valuesFit =
    Array.isArray(after) &&
    after.length === order.columns.length &&
    after.every((v) => typeof v === 'string' || typeof v === 'number');
  if (
    list !== order.columns.join(',') ||
    !valuesFit ||
    !Number.isSafeInteger(offset) ||
    offset < 0 ||
    !Number.isSafeInteger(total) ||
    total < 0 ||
    typeof exact !== 'boolean'
  ) {
    throw cursorMismatch();
  }
  return { after, offset, total, exact };
}

function columnKey(column: string): string {
  return column.slice(column.lastIndexOf('.') + 1);
}

function cursorValue(value: unknown): CursorValue {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'string' || typeof value === 'number') return value;
  throw new Error(`list order column holds ${typeof value}; order lists by non-null text, number or timestamp columns`);
}

/** The page's column carrying the bounded count of the matches (every row the same), taken off before rows are served. */
const BOUNDED_TOTAL = 'list_page_bounded_total';

/**
 * One page of `filtered` (a query with its filters and selection, unordered) in `order`, for `request`: the
 * list's whole query, whose filters bind its cursors.
 * An offset page counts the matches up to `paging.exact_total_max` and, past it, takes the planner's estimate, so
 * the first page of a large list costs about what a small list's does. The count is a subquery of the page's own
 * statement, run once: one round trip and one connection per page, not two. Cursor pages carry the total of the walk's
 * first page, so walking a whole list costs one index range scan per page and time linear in its size.
 * `countable` is the query counted and estimated when a cheaper one has the same matches (without joins that only
 * feed the selection, and without values that change on every call, such as an instant, which would keep the
 * estimate from being reused).
 */
export async function listPage<DB, TB extends keyof DB, Row extends Record<string, unknown>, CB extends keyof DB, C>(
  store: TenantStore,
  filtered: SelectQueryBuilder<DB, TB, Row>,
  order: ListOrder,
  request: ListQuery,
  cursors: CursorSealer,
  countable?: SelectQueryBuilder<DB, CB, C>,
): Promise<Page<Row>> {
  // Counting reads only the matches (clearSelect), whatever the selection of either query.
  const matches = (countable ?? filtered) as unknown as SelectQueryBuilder<DB, TB, Row>;
  const limit = request.limit ?? paging.default_limit;
  if (request.cursor !== undefined && (request.offset ?? 0) > 0) {
    throw new PlatformError('PLATFORM_INVALID_INPUT', 'Send either cursor or a non-zero offset, not both.', {
      field: 'offset',
    });
  }
  const state =
    request.cursor === undefined ? undefined : await decodeCursor(cursors, filtersOf(request), request.cursor, order);
  const offset = state?.offset ?? request.offset ?? 0;
  const counting = state ? filtered : filtered.select(sql<number>`(${boundedCount(store, matches)})`.as(BOUNDED_TOTAL));
  // One row past the page tells whether another follows; it is not served, so the audit record does not name it.
  const fetched = (await orderedRows(counting, order, state)
    .limit(limit + 1)
    .offset(state ? 0 : offset)
    .execute()) as (Row & { [BOUNDED_TOTAL]?: number })[];
  const rows = fetched.slice(0, limit).map(({ [BOUNDED_TOTAL]: _, ...row }) => row as unknown as Row);
  const hasMore = fetched.length > limit;
  if (hasMore) store.notServed(fetched.slice(limit));
  const nextOffset = offset + rows.length;
  const { total, exact } =
    state ?? (await totalOf(matches, await countedOf(store, matches, fetched, offset), nextOffset + (hasMore ? 1 : 0)));
  const last = rows.at(-1);
  const nextCursor =
    hasMore && last
      ? await encodeCursor(cursors, filtersOf(request), order, {
          after: order.columns.map((c) => cursorValue(last[columnKey(c)])),
          offset: nextOffset,
          total,
          exact,
        })
      : null;
  return {
    rows,
    meta: {
      total,
      total_exact: exact,
      limit,
      offset,
      has_more: hasMore,
      next_offset: hasMore ? nextOffset : null,
      next_cursor: nextCursor,
    },
  };
}

/** The bounded count an offset page carried; past the last match the page has no row to carry it, so it counts apart. */
async function countedOf<DB, TB extends keyof DB, Row>(
  store: TenantStore,
  matches: SelectQueryBuilder<DB, TB, Row>,
  fetched: { [BOUNDED_TOTAL]?: number }[],
  offset: number,
): Promise<number> {
  const carried = fetched[0]?.[BOUNDED_TOTAL];
  if (carried !== undefined) return carried;
  return offset === 0 ? 0 : (await boundedCount(store, matches).executeTakeFirstOrThrow()).total;
}

/**
 * The exact count when it is within the bound; past it, the planner's estimate, never below what the page itself
 * proves exists (`atLeast`: the rows up to this page's end, and one more when there is a next page).
 */
async function totalOf<DB, TB extends keyof DB, Row>(
  filtered: SelectQueryBuilder<DB, TB, Row>,
  counted: number,
  atLeast: number,
): Promise<Total> {
  if (counted <= paging.exact_total_max) return { total: counted, exact: true };
  const estimate = await estimateMatches(filtered);
  return { total: Math.max(estimate, counted, atLeast), exact: false };
}

/** Counts the matches, reading at most one past `paging.exact_total_max` of them: an index range scan of at most that many entries. */
function boundedCount<DB, TB extends keyof DB, Row>(store: TenantStore, filtered: SelectQueryBuilder<DB, TB, Row>) {
  const matches = filtered
    .clearSelect()
    .select(sql`1`.as('one'))
    .limit(paging.exact_total_max + 1);
  return store.selectFromRows(matches.as('bounded')).select(sql<number>`count(*)::int`.as('total'));
}

/** Estimates by query text and values, for a minute: planning one costs as much as the count it replaces. */
const estimates = new Map<string, { rows: number; until: number }>();
const ESTIMATE_TTL_MS = 60_000;
const ESTIMATES_KEPT = 1_000;

/** The planner's row estimate for the matches, from the table's statistics (kept current by autovacuum's analyze). */
async function estimateMatches<DB, TB extends keyof DB, Row>(
  filtered: SelectQueryBuilder<DB, TB, Row>,
): Promise<number> {
  const matches = filtered.clearSelect().select(sql`1`.as('one'));
  const { sql: text, parameters } = matches.compile();
  const key = `${text}\u0000${JSON.stringify(parameters)}`;
  const now = Date.now();
  const kept = estimates.get(key);
  if (kept && kept.until > now) return kept.rows;
  const [row] = await matches.explain('json');
  const plan = row?.['QUERY PLAN'];
  const planned = (typeof plan === 'string' ? JSON.parse(plan) : plan)?.[0]?.Plan?.['Plan Rows'];
  const rows = Number.isFinite(planned) ? Math.round(planned) : 0;
  estimates.delete(key);
  if (estimates.size >= ESTIMATES_KEPT) estimates.delete(estimates.keys().next().value!);
  estimates.set(key, { rows, until: now + ESTIMATE_TTL_MS });
  return rows;
}

function orderedRows<DB, TB extends keyof DB, Row>(
  filtered: SelectQueryBuilder<DB, TB, Row>,
  order: ListOrder,
  state: CursorState | undefined,
) {
  const columns = order.columns.map((c) => sql.ref(c));
  let query = filtered;
  if (state) {
    const comparison = order.direction === 'asc' ? sql.raw('>') : sql.raw('<');
    query = query.where(sql<boolean>`(${sql.join(columns)}) ${comparison} (${sql.join(state.after)})`);
  }
  return order.columns.reduce((q, c) => q.orderBy(sql.ref(c), order.direction), query);
}
