import { sql } from 'kysely';
import type { TenantStore } from '../../db/tenant-store.js';
import type { components } from '../../generated/openapi.js';
import { AGING_BUCKETS, type AgingBucket } from '../../domain/physician-orders/aging.js';
import { AgingConditions, agencyOrders } from '../physician-orders/physician-order-repository.js';
import { column, OFFICE_ID, phiOf, type GovernedQuery, readsDataOf } from './governed-query.js';

/**
 * Orders waiting for a physician's signature, aged at the run's instant by the physician-order rules (office-calendar
 * days, the agency's SLA: src/domain/physician-orders/aging.ts and its SQL twin in the order repository).
 */
function awaitingOrders(store: TenantStore, asOf: Date, aging: AgingConditions, officeId: string | undefined) {
  let orders = agencyOrders(store, asOf)
    .innerJoin('physicians', (join) =>
      join.on(store.ofAgency('physicians')).onRef('physicians.id', '=', 'physician_orders.physician_id'),
    )
    .where(aging.awaiting);
  if (officeId !== undefined) orders = orders.where('physician_orders.office_id', '=', officeId);
  return orders.select([
    'physician_orders.physician_id',
    sql<string>`physicians.first_name || ' ' || physicians.last_name`.as('physician_name'),
    'physicians.npi as physician_npi',
    aging.daysOutstanding().as('days'),
    aging.awaitingBucket().as('aging_bucket'),
    sql<boolean>`coalesce(${aging.awaitingBreached()}, false)`.as('sla_breached'),
  ]);
}

/** A column serving a field of GET /physician-orders, reduced in no_phi sessions as that route reduces it. */
const orderPhi = (field: keyof components['schemas']['PhysicianOrder']) => phiOf('PhysicianOrder', field);

const PHYSICIAN_COLUMNS = [
  column('physician_name', 'string', 'Signing physician (withheld in no_phi sessions).', orderPhi('physician_name')),
  column('physician_id', 'string', 'Physician id (a PH- handle in no_phi sessions).', orderPhi('physician_id')),
  column('physician_npi', 'string', 'Physician NPI (withheld in no_phi sessions).', orderPhi('physician_npi')),
];

const BUCKET_MEANING: Record<AgingBucket, string> = {
  not_sent: 'not sent to the physician yet',
  '0_7_days': 'sent 0 to 7 days ago',
  '8_14_days': 'sent 8 to 14 days ago',
  '15_30_days': 'sent 15 to 30 days ago',
  '31_plus_days': 'sent 31 or more days ago',
};

export const unsignedOrdersByPhysician: GovernedQuery<{ office_id?: string }> = {
  id: 'unsigned_orders_by_physician',
  title: 'Unsigned orders by physician and aging bucket',
  description:
    "Physician orders awaiting signature now, one row per physician with a count per aging bucket (office-calendar days since sent, as on GET /physician-orders), the total, how many are past the agency's signature SLA, and the oldest one's days (withheld in no_phi sessions).",
  parameters: { properties: { office_id: OFFICE_ID } },
  columns: [
    ...PHYSICIAN_COLUMNS,
    ...AGING_BUCKETS.map((bucket) => column(bucket, 'integer', `Orders ${BUCKET_MEANING[bucket]}.`)),
    column('sla_breached', 'integer', "Orders outstanding longer than the agency's signature SLA."),
    column('total', 'integer', 'Orders awaiting signature.'),
    column(
      'oldest_days_outstanding',
      'integer',
      'Days outstanding of the oldest sent order (null when none is sent; withheld in no_phi sessions, as days_outstanding is on GET /physician-orders).',
      orderPhi('days_outstanding'),
    ),
  ],
  order: { columns: ['physician_name', 'physician_id'], direction: 'asc' },
  ...readsDataOf('listPhysicianOrders'),
  costUnits: 5,
  rows(store, { office_id }, asOf) {
    const aging = new AgingConditions(asOf);
    // offset 0 keeps the planner from pulling the subquery up, which would age each order again in each count.
    const awaiting = awaitingOrders(store, asOf, aging, office_id).offset(0).as('awaiting');
    const count = (condition: ReturnType<typeof sql>, alias: string) =>
      sql<number>`(count(*) filter (where ${condition}))::int`.as(alias);
    return store
      .selectFromRows(awaiting)
      .select(['awaiting.physician_name', 'awaiting.physician_id', 'awaiting.physician_npi'])
      .select(AGING_BUCKETS.map((bucket) => count(sql`awaiting.aging_bucket = ${bucket}`, bucket)))
      .select([
        count(sql`awaiting.sla_breached`, 'sla_breached'),
        sql<number>`count(*)::int`.as('total'),
        sql<number | null>`max(awaiting.days)`.as('oldest_days_outstanding'),
      ])
      .groupBy(['awaiting.physician_name', 'awaiting.physician_id', 'awaiting.physician_npi']);
  },
};

interface AwaitingParameters {
  aging_bucket?: AgingBucket;
  office_id?: string;
}

export const awaitingSignatureOrders: GovernedQuery<AwaitingParameters> = {
  id: 'orders_awaiting_signature',
  title: 'Orders awaiting signature',
  description:
    "Every physician order awaiting signature now, one row per order, aged as on GET /physician-orders: who must sign it, for which patient, since when, and whether it is past the agency's SLA. In no_phi sessions order, patient and physician ids are handles, names withheld, dates reduced to the year and days outstanding withheld, as on GET /physician-orders.",
  parameters: {
    properties: {
      aging_bucket: { type: 'string', enum: [...AGING_BUCKETS], description: 'Only orders in this aging bucket.' },
      office_id: OFFICE_ID,
    },
  },
  columns: [
    column(
      'order_id',
      'string',
      'Physician order id (an OR- handle in no_phi sessions, as on GET /physician-orders).',
      orderPhi('id'),
    ),
    column('patient_id', 'string', 'Patient id (a PT- handle in no_phi sessions).', orderPhi('patient_id')),
    ...PHYSICIAN_COLUMNS,
    column(
      'order_type',
      'string',
      'plan_of_care, recertification, verbal, supplemental, face_to_face or discharge.',
      orderPhi('order_type'),
    ),
    column('office_id', 'string', 'Office the order ages in (its time zone).', orderPhi('office_id')),
    column(
      'sent_at',
      'date-time',
      'When it was sent to the physician (null: not sent; the year only in no_phi sessions).',
      orderPhi('sent_at'),
    ),
    column(
      'days_outstanding',
      'integer',
      'Office-calendar days since sent (null: not sent; withheld in no_phi sessions, where aging_bucket says how old the order is).',
      orderPhi('days_outstanding'),
    ),
    column(
      'aging_bucket',
      'string',
      'not_sent, 0_7_days, 8_14_days, 15_30_days or 31_plus_days.',
      orderPhi('aging_bucket'),
    ),
    column('sla_breached', 'boolean', "Outstanding longer than the agency's signature SLA.", orderPhi('sla_breached')),
  ],
  order: { columns: ['order_id'], direction: 'asc' },
  ...readsDataOf('listPhysicianOrders'),
  costUnits: 5,
  rows(store, { aging_bucket, office_id }, asOf) {
    const aging = new AgingConditions(asOf);
    let orders = awaitingOrders(store, asOf, aging, office_id).select([
      'physician_orders.id as order_id',
      'physician_orders.patient_id',
      'physician_orders.order_type',
      'physician_orders.office_id',
      'physician_orders.sent_at',
    ]);
    if (aging_bucket !== undefined) orders = orders.where(aging.awaitingIn(aging_bucket));
    // No optimization fence (offset 0): the page's keyset order and limit then reach the orders' primary key, and only
    // the page's orders are aged, not every awaiting order of the agency (12 ms against 113 ms on the large demo agency).
    return store
      .selectFromRows(orders.as('awaiting'))
      .select([
        'awaiting.order_id',
        'awaiting.patient_id',
        'awaiting.physician_name',
        'awaiting.physician_id',
        'awaiting.physician_npi',
        'awaiting.order_type',
        'awaiting.office_id',
        'awaiting.sent_at',
        sql<number | null>`awaiting.days`.as('days_outstanding'),
        'awaiting.aging_bucket',
        'awaiting.sla_breached',
      ]);
  },
};
