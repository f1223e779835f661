import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import { reusableTenantQuery, type TenantStore } from '../../db/tenant-store.js';
import type { CursorSealer } from '../../db/cursor-sealer.js';
import { listPage, type ListOrder, type ListQuery, type Page } from '../../db/paging.js';
import { AGING_BUCKETS, AWAITING, DAY_BUCKETS, type AgingBucket } from '../../domain/physician-orders/aging.js';
import type { OrderType, SignatureStatus } from './physician-order-tables.js';
import { AgingSummaryCache, type AgingSummary, type CountedSummary } from './aging-summary-cache.js';
import { canonicalJson } from '../../shared/canonical-json.js';

export interface OrderFilters {
  statuses?: SignatureStatus[];
  orderTypes?: OrderType[];
  agingBuckets?: AgingBucket[];
  slaBreached?: boolean;
  physicianId?: string;
  patientId?: string;
}

/** Newest first, served by the physician_orders_*_idx indexes. */
const NEWEST: ListOrder = { columns: ['physician_orders.created_at', 'physician_orders.id'], direction: 'desc' };

const ORDER_COLUMNS = [
  'physician_orders.id',
  'physician_orders.order_type',
  'physician_orders.patient_id',
  'physician_orders.physician_id',
  'physician_orders.office_id',
  'physician_orders.signature_status',
  'physician_orders.delivery_method',
  'physician_orders.sent_at',
  'physician_orders.signed_at',
  'physician_orders.received_at',
  'physician_orders.created_at',
] as const;

/**
 * Per office, the instants at which an order's whole days outstanding at as_of reach each bucket's bounds and pass the
 * agency's SLA: `aged_<k>` is the start of the office's calendar day k - 1 days before as_of's, so an order sent
 * before it is at least k days outstanding. Computed once per office (offset 0 keeps the planner from inlining them
 * into every order), so that aging an order in SQL is comparing its sent_at, never converting it to a time zone.
 */
function agingClock(store: TenantStore, asOf: Date) {
  const at = sql`cast(${asOf.toISOString()} as timestamptz)`;
  const dayStart = (daysBefore: RawBuilder<unknown>) =>
    sql<Date>`(((${at} at time zone offices.timezone)::date - ${daysBefore} + 1)::timestamp at time zone offices.timezone)`;
  return store
    .selectFrom('offices')
    .innerJoin('agencies', 'agencies.id', 'offices.agency_id')
    .select(['offices.id as office_id', 'offices.timezone', 'agencies.order_sla_days'])
    .select(AGED_BOUNDS.map((days) => dayStart(sql.lit(days)).as(`aged_${days}`)))
    .select(dayStart(sql`(agencies.order_sla_days + 1)`).as('breaches_at'))
    .offset(0);
}

/** Day counts at which an order enters a bucket or leaves one, from the domain's bucket table. */
const AGED_BOUNDS = [
  ...new Set(
    DAY_BUCKETS.flatMap(({ from, to }) => [from, ...(to === null ? [] : [to + 1])]).filter((days) => days > 0),
  ),
];

/** The agency's orders, each with its office's aging clock (and the office's time zone and the agency's SLA for the view). */
export function agencyOrders(store: TenantStore, asOf: Date) {
  return store
    .selectFrom('physician_orders')
    .innerJoin(agingClock(store, asOf).as('aging'), 'aging.office_id', 'physician_orders.office_id');
}

/**
 * The SQL twin of the domain's aging rules (src/domain/physician-orders/aging.ts), built from its bucket table, for the
 * filters, the summary and the governed queries that must see every matching row. Its expressions refer to
 * agencyOrders' tables.
 */
export class AgingConditions {
  readonly awaiting = sql<SqlBool>`physician_orders.signature_status = ${AWAITING}`;
  private readonly asOf: RawBuilder<Date>;
  private readonly sentByAsOf: RawBuilder<SqlBool>;

  constructor(asOf: Date) {
    this.asOf = sql<Date>`cast(${asOf.toISOString()} as timestamptz)`;
    this.sentByAsOf = sql<SqlBool>`physician_orders.sent_at <= ${this.asOf}`;
  }

  /** An awaiting order's whole office-calendar days outstanding at as_of; null when not sent by then. */
  daysOutstanding(): RawBuilder<number | null> {
    const localDay = (instant: Expression<unknown>) => sql`(${instant} at time zone aging.timezone)::date`;
    return sql<
      number | null
    >`case when ${this.sentByAsOf} then ${localDay(this.asOf)} - ${localDay(sql.ref('physician_orders.sent_at'))} end`;
  }

  /** An awaiting order's aging bucket at as_of. */
  awaitingBucket(): RawBuilder<AgingBucket> {
    const cases = AGING_BUCKETS.map((bucket) => sql`when ${this.awaitingIn(bucket)} then ${bucket}`);
    return sql<AgingBucket>`case ${sql.join(cases, sql` `)} end`;
  }

  /** Whether an order sent by as_of is in a bucket of sent orders: its sent_at against the office's day bounds. */
  private sentWithin(bucket: Exclude<AgingBucket, 'not_sent'>): RawBuilder<SqlBool> {
    const { from, to } = DAY_BUCKETS.find((b) => b.bucket === bucket)!;
    const aged = (days: number) => sql.ref(`aging.aged_${days}`);
    const conditions = [this.sentByAsOf];
    if (from > 0) conditions.push(sql<SqlBool>`physician_orders.sent_at < ${aged(from)}`);
    if (to !== null) conditions.push(sql<SqlBool>`physician_orders.sent_at >= ${aged(to + 1)}`);
    return sql<SqlBool>`(${sql.join(conditions, sql` and `)})`;
  }

  bucket(bucket: AgingBucket): RawBuilder<SqlBool> {
    return sql<SqlBool>`(${this.awaiting} and ${this.awaitingIn(bucket)})`;
  }

  /**
   * For an awaiting order: whether it is in the bucket. Reads sent_at alone, so that counting the awaiting orders is an
   * index-only scan of the partial index on awaiting orders (a reference to signature_status would fetch every row).
   */
  awaitingIn(bucket: AgingBucket): RawBuilder<SqlBool> {
    return bucket === 'not_sent' ? sql<SqlBool>`not coalesce(${this.sentByAsOf}, false)` : this.sentWithin(bucket);
  }

  /** An awaiting order past the SLA at as_of; a signed one whose signature took longer than the SLA. */
  breached(): RawBuilder<SqlBool> {
    const localDay = (column: string) => sql`(${sql.ref(column)} at time zone aging.timezone)::date`;
    const daysToSign = sql`${localDay('physician_orders.signed_at')} - ${localDay('physician_orders.sent_at')}`;
    return sql<SqlBool>`coalesce((${this.awaiting} and ${this.awaitingBreached()})
      or (physician_orders.signature_status = 'signed' and ${daysToSign} > aging.order_sla_days), false)`;
  }

  /** For an awaiting order: sent by as_of and before the office's SLA bound. */
  awaitingBreached(): RawBuilder<SqlBool> {
    return sql<SqlBool>`(${this.sentByAsOf} and physician_orders.sent_at < aging.breaches_at)`;
  }
}

/** Counts of the awaiting orders of a filtered set (the query selects only those), per bucket and past the SLA. */
function summaryColumns(aging: AgingConditions) {
  const count = (condition: RawBuilder<SqlBool>, alias: string) =>
    sql<number>`(count(*) filter (where ${condition}))::int`.as(alias);
  return [
    ...AGING_BUCKETS.map((bucket) => count(aging.awaitingIn(bucket), bucket)),
    count(aging.awaitingBreached(), 'sla_breached'),
  ];
}

/** The filters' conditions: those on the order's own columns, and those that age it (they read the aging clock). */
function conditions(filters: OrderFilters, aging: AgingConditions) {
  const column = (name: string) => sql.ref(`physician_orders.${name}`);
  const plain: RawBuilder<SqlBool>[] = [];
  const aged: RawBuilder<SqlBool>[] = [];
  if (filters.statuses) plain.push(sql<SqlBool>`${column('signature_status')} in (${sql.join(filters.statuses)})`);
  if (filters.orderTypes) plain.push(sql<SqlBool>`${column('order_type')} in (${sql.join(filters.orderTypes)})`);
  if (filters.physicianId !== undefined) plain.push(sql<SqlBool>`${column('physician_id')} = ${filters.physicianId}`);
  if (filters.patientId !== undefined) plain.push(sql<SqlBool>`${column('patient_id')} = ${filters.patientId}`);
  if (filters.agingBuckets) {
    const buckets = filters.agingBuckets.map((bucket) => aging.bucket(bucket));
    aged.push(sql<SqlBool>`(${sql.join(buckets, sql` or `)})`);
  }
  if (filters.slaBreached !== undefined)
    aged.push(filters.slaBreached ? aging.breached() : sql<SqlBool>`not ${aging.breached()}`);
  return { plain, aged };
}

function filtered(store: TenantStore, filters: OrderFilters, asOf: Date, aging: AgingConditions) {
  const { plain, aged } = conditions(filters, aging);
  return [...plain, ...aged].reduce((query, condition) => query.where(condition), agencyOrders(store, asOf));
}

/**
 * The same matches as `filtered`, to count and estimate: without the aging clock unless a filter ages orders, so that
 * the query has no as_of (the planner's estimate is then reused across calls) and counts one table.
 */
function countable(store: TenantStore, filters: OrderFilters, asOf: Date, aging: AgingConditions) {
  const { plain, aged } = conditions(filters, aging);
  if (aged.length > 0) return filtered(store, filters, asOf, aging);
  return plain.reduce((query, condition) => query.where(condition), store.selectFrom('physician_orders'));
}

/** An order with its office's time zone, its agency's SLA and its physician, as the view needs them. */
function withDetails<Q extends ReturnType<typeof agencyOrders>>(store: TenantStore, query: Q) {
  return query
    .leftJoin('physicians', (join) =>
      join.on(store.ofAgency('physicians')).onRef('physicians.id', '=', 'physician_orders.physician_id'),
    )
    .select(ORDER_COLUMNS)
    .select([
      'aging.timezone',
      'aging.order_sla_days',
      'physicians.npi as physician_npi',
      sql<string | null>`${sql.ref('physicians.first_name')} || ' ' || ${sql.ref('physicians.last_name')}`.as(
        'physician_name',
      ),
    ]);
}

export type OrderRow = Awaited<ReturnType<ReturnType<typeof withDetails>['executeTakeFirstOrThrow']>>;

const summaries = new AgingSummaryCache();

const orderRevision = reusableTenantQuery('physician-order-revision', [], (store) =>
  store.lookupFrom('physician_order_revisions').select('physician_order_revisions.revision'),
);

/** One kept summary per agency and set of filters: the order of listed values does not change the set. */
function summaryKey(store: TenantStore, filters: OrderFilters): string {
  const sorted = Object.fromEntries(
    Object.entries(filters).map(([name, value]) => [name, Array.isArray(value) ? [...value].sort() : value]),
  );
  return `${store.agencyId}\u0000${canonicalJson(sorted)}`;
}

const EARLIEST = new Date(-8.64e15);
const LATEST = new Date(8.64e15);

/**
 * Counts the summary with, in the same statement (one snapshot), the agency's order revision and the instants around
 * as_of between which it holds (AgingSummaryCache): the first and next midnight in any of the agency's offices, and the
 * last and next sending of any awaiting order of the agency (filtered or not: an aging filter admits orders by it).
 */
async function countSummary(
  store: TenantStore,
  filters: OrderFilters,
  asOf: Date,
  aging: AgingConditions,
): Promise<CountedSummary> {
  const at = sql<Date>`cast(${asOf.toISOString()} as timestamptz)`;
  const localDay = sql`(${at} at time zone offices.timezone)::date`;
  const officeDay = (bound: 'max' | 'min', days: number) =>
    store
      .lookupFrom('offices')
      .select(
        sql<Date | null>`${sql.raw(bound)}((${localDay} + ${sql.lit(days)})::timestamp at time zone offices.timezone)`.as(
          'at',
        ),
      )
      .as(bound === 'max' ? 'day_from' : 'day_until');
  const awaitingSent = (bound: 'max' | 'min') =>
    store
      .lookupFrom('physician_orders')
      .where(aging.awaiting)
      .where(sql<SqlBool>`physician_orders.sent_at ${sql.raw(bound === 'max' ? '<=' : '>')} ${at}`)
      .select(sql<Date | null>`${sql.raw(bound)}(physician_orders.sent_at)`.as('at'))
      .as(bound === 'max' ? 'last_sent' : 'next_sent');
  const counted = await filtered(store, filters, asOf, aging)
    .where(aging.awaiting)
    .select(summaryColumns(aging))
    .select([
      store.lookupFrom('physician_order_revisions').select('physician_order_revisions.revision').as('revision'),
      officeDay('max', 0),
      officeDay('min', 1),
      awaitingSent('max'),
      awaitingSent('min'),
    ])
    .$castTo<
      AgingSummary & {
        revision: string | null;
        day_from: Date | null;
        day_until: Date | null;
        last_sent: Date | null;
        next_sent: Date | null;
      }
    >()
    .executeTakeFirstOrThrow();
  const { revision, day_from, day_until, last_sent, next_sent, ...summary } = counted;
  const latest = (...at: (Date | null)[]) => new Date(Math.max(...at.map((a) => (a ?? EARLIEST).getTime())));
  const earliest = (...at: (Date | null)[]) => new Date(Math.min(...at.map((a) => (a ?? LATEST).getTime())));
  return { summary, revision, validFrom: latest(day_from, last_sent), validUntil: earliest(day_until, next_sent) };
}

/**
 * The summary kept for the agency's current revision and as_of's day, or counted afresh. The revision is read apart
 * from the page: a page and a summary were two statements before too (under read committed, two snapshots).
 */
async function agingSummary(
  store: TenantStore,
  filters: OrderFilters,
  asOf: Date,
  aging: AgingConditions,
  revision: string | null,
): Promise<AgingSummary> {
  const key = summaryKey(store, filters);
  const kept = summaries.find(key, revision, asOf);
  if (kept) return kept;
  const counted = await countSummary(store, filters, asOf, aging);
  summaries.keep(key, counted);
  return counted.summary;
}

/** The aging summary of the agency's orders matching `filters` at `asOf`, the one a page of them carries (kept or counted). */
export async function orderAgingSummary(store: TenantStore, filters: OrderFilters, asOf: Date): Promise<AgingSummary> {
  const [revision] = await orderRevision(store, {});
  return agingSummary(store, filters, asOf, new AgingConditions(asOf), revision?.revision ?? null);
}

/** A page of the agency's orders matching `filters`, newest first, and the aging summary of all of them at `asOf`. */
export async function listOrderPage(
  store: TenantStore,
  filters: OrderFilters,
  asOf: Date,
  page: ListQuery,
  cursors: CursorSealer,
): Promise<Page<OrderRow> & { summary: AgingSummary }> {
  const aging = new AgingConditions(asOf);
  const [listed, revisions] = await Promise.all([
    listPage(
      store,
      withDetails(store, filtered(store, filters, asOf, aging)),
      NEWEST,
      page,
      cursors,
      countable(store, filters, asOf, aging),
    ),
    orderRevision(store, {}),
  ]);
  const summary = await agingSummary(store, filters, asOf, aging, revisions[0]?.revision ?? null);
  return { ...listed, summary };
}

export function findOrder(store: TenantStore, id: string, asOf: Date): Promise<OrderRow | undefined> {
  return withDetails(store, agencyOrders(store, asOf)).where('physician_orders.id', '=', id).executeTakeFirst();
}
