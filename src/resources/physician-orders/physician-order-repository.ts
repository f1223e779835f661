import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type { TenantStore } from '../../db/tenant-store.js';
import type { CursorSealer } from '../../db/cursor-sealer.js';
import { listPage, type ListOrder, type ListQuery, type Page } from '../../db/paging.js';
import { AGING_BUCKETS, AWAITING, DAY_BUCKETS, type AgingBucket } from '../../domain/physician-orders/aging.js';
import type { OrderType, SignatureStatus } from './physician-order-tables.js';

export interface OrderFilters {
  statuses?: SignatureStatus[];
  orderTypes?: OrderType[];
  agingBuckets?: AgingBucket[];
  slaBreached?: boolean;
  physicianId?: string;
  patientId?: string;
}

export type AgingSummary = Record<AgingBucket | 'sla_breached', number>;

/** Newest first, served by the physician_orders_*_idx indexes. */
const NEWEST: ListOrder = { columns: ['physician_orders.created_at', 'physician_orders.id'], direction: 'desc' };

const ORDER_COLUMNS = [
  'physician_orders.id', 'physician_orders.order_type', 'physician_orders.patient_id', 'physician_orders.physician_id',
  'physician_orders.office_id', 'physician_orders.signature_status', 'physician_orders.delivery_method', 'physician_orders.sent_at',
  'physician_orders.signed_at', 'physician_orders.received_at', 'physician_orders.created_at',
] as const;

/**
 * The agency's orders with what aging needs: the office's time zone and the agency's SLA. Left joins on unique keys,
 * so that a count that uses none of their columns skips them.
 */
export function agencyOrders(store: TenantStore) {
  return store
    .selectFrom('physician_orders')
    .leftJoin('offices', (join) => join.onRef('offices.agency_id', '=', 'physician_orders.agency_id').onRef('offices.id', '=', 'physician_orders.office_id'))
    .leftJoin('agencies', 'agencies.id', 'physician_orders.agency_id');
}

/**
 * The SQL twin of the domain's aging rules (src/domain/physician-orders/aging.ts), built from its bucket table, for the
 * filters, the summary and the governed queries that must see every matching row: whole days are office-calendar days.
 * Its expressions refer to agencyOrders' tables.
 */
export class AgingConditions {
  private readonly asOf: RawBuilder<Date>;
  readonly awaiting = sql<SqlBool>`physician_orders.signature_status = ${AWAITING}`;
  private readonly sentByAsOf: RawBuilder<SqlBool>;
  private readonly daysOutstanding: RawBuilder<number>;
  private readonly sla = sql.ref('agencies.order_sla_days');

  constructor(asOf: Date) {
    this.asOf = sql<Date>`cast(${asOf.toISOString()} as timestamptz)`;
    this.sentByAsOf = sql<SqlBool>`physician_orders.sent_at <= ${this.asOf}`;
    this.daysOutstanding = sql<number>`(${this.localDay(this.asOf)} - ${this.localDay(sql.ref('physician_orders.sent_at'))})`;
  }

  private localDay(instant: Expression<unknown>): RawBuilder<string> {
    return sql<string>`(${instant} at time zone offices.timezone)::date`;
  }

  bucket(bucket: AgingBucket): RawBuilder<SqlBool> {
    if (bucket === 'not_sent') return sql<SqlBool>`(${this.awaiting} and not coalesce(${this.sentByAsOf}, false))`;
    return sql<SqlBool>`(${this.awaiting} and ${this.sentByAsOf} and ${dayBucket(bucket, this.daysOutstanding)})`;
  }

  breached(): RawBuilder<SqlBool> {
    const daysToSign = sql`${this.localDay(sql.ref('physician_orders.signed_at'))} - ${this.localDay(sql.ref('physician_orders.sent_at'))}`;
    return sql<SqlBool>`coalesce((${this.awaiting} and ${this.sentByAsOf} and ${this.daysOutstanding} > ${this.sla})
      or (physician_orders.signature_status = 'signed' and ${daysToSign} > ${this.sla}), false)`;
  }

  /** Each awaiting order's days outstanding (null: not sent by as_of), computed once per row for the summary. */
  awaitingDays() {
    return [sql<number | null>`case when ${this.sentByAsOf} then ${this.daysOutstanding} end`.as('days'), sql<number>`${this.sla}`.as('sla')];
  }
}

/** Whether `days` falls in a bucket of sent orders. */
export function dayBucket(bucket: AgingBucket, days: Expression<unknown>): RawBuilder<SqlBool> {
  const { from, to } = DAY_BUCKETS.find((b) => b.bucket === bucket)!;
  return to === null ? sql<SqlBool>`${days} >= ${from}` : sql<SqlBool>`${days} between ${from} and ${to}`;
}

/**
 * Counts of the awaiting orders of a filtered set, per bucket and past the SLA: aggregates over a subquery `awaiting`
 * that selects AgingConditions.awaitingDays().
 */
export function summaryColumns() {
  const days = sql.ref('awaiting.days');
  const count = (condition: RawBuilder<SqlBool>, alias: string) => sql<number>`(count(*) filter (where ${condition}))::int`.as(alias);
  const buckets = AGING_BUCKETS.map((bucket) => count(bucket === 'not_sent' ? sql<SqlBool>`${days} is null` : dayBucket(bucket, days), bucket));
  return [...buckets, count(sql<SqlBool>`${days} > awaiting.sla`, 'sla_breached')];
}

function filtered(store: TenantStore, filters: OrderFilters, aging: AgingConditions) {
  let query = agencyOrders(store);
  if (filters.statuses) query = query.where('physician_orders.signature_status', 'in', filters.statuses);
  if (filters.orderTypes) query = query.where('physician_orders.order_type', 'in', filters.orderTypes);
  if (filters.physicianId !== undefined) query = query.where('physician_orders.physician_id', '=', filters.physicianId);
  if (filters.patientId !== undefined) query = query.where('physician_orders.patient_id', '=', filters.patientId);
  if (filters.agingBuckets) {
    const buckets = filters.agingBuckets.map((bucket) => aging.bucket(bucket));
    query = query.where(sql<SqlBool>`(${sql.join(buckets, sql` or `)})`);
  }
  if (filters.slaBreached !== undefined) query = query.where(filters.slaBreached ? aging.breached() : sql<SqlBool>`not ${aging.breached()}`);
  return query;
}

/** An order with its office's time zone, its agency's SLA and its physician, as the view needs them. */
function withDetails<Q extends ReturnType<typeof agencyOrders>>(query: Q) {
  return query
    .leftJoin('physicians', (join) => join.onRef('physicians.agency_id', '=', 'physician_orders.agency_id').onRef('physicians.id', '=', 'physician_orders.physician_id'))
    .select(ORDER_COLUMNS)
    .select([
      'offices.timezone',
      'agencies.order_sla_days',
      'physicians.npi as physician_npi',
      sql<string | null>`${sql.ref('physicians.first_name')} || ' ' || ${sql.ref('physicians.last_name')}`.as('physician_name'),
    ]);
}

export type OrderRow = Awaited<ReturnType<ReturnType<typeof withDetails>['executeTakeFirstOrThrow']>>;

/** A page of the agency's orders matching `filters`, newest first, and the aging summary of all of them at `asOf`. */
export async function listOrderPage(store: TenantStore, filters: OrderFilters, asOf: Date, page: ListQuery, cursors: CursorSealer): Promise<Page<OrderRow> & { summary: AgingSummary }> {
  const aging = new AgingConditions(asOf);
  const matching = filtered(store, filters, aging);
  const [listed, summary] = await Promise.all([
    listPage(store, withDetails(matching), NEWEST, page, cursors),
    // offset 0 keeps the planner from pulling the subquery up, which would compute the days again in each count.
    store.db.selectFrom(matching.where(aging.awaiting).select(aging.awaitingDays()).offset(0).as('awaiting')).select(summaryColumns()).$castTo<AgingSummary>().executeTakeFirstOrThrow(),
  ]);
  store.audited(listed.rows.map((row) => row.id));
  return { ...listed, summary };
}

export async function findOrder(store: TenantStore, id: string): Promise<OrderRow | undefined> {
  const row = await withDetails(agencyOrders(store)).where('physician_orders.id', '=', id).executeTakeFirst();
  if (row) store.audited([row.id]);
  return row;
}
