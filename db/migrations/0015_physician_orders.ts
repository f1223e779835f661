import { sql, type CreateTableBuilder, type Kysely } from 'kysely';

/**
 * Physician orders and their signature tracking (`listPhysicianOrders`, `getPhysicianOrder`), and each agency's signature SLA in days.
 * Order content (the clinical text) is not stored here: the partition never serves it.
 */

const ORDER_TYPES = ['plan_of_care', 'recertification', 'verbal', 'supplemental', 'face_to_face', 'discharge'];
const SIGNATURE_STATUSES = [
  'signed',
  'awaiting_signature',
  'signature_not_required',
  'rejected',
  'superseded',
  'cancelled',
];
const DELIVERY_METHODS = ['fax', 'portal', 'e_signature'];

const list = (values: string[]) => sql.join(values.map((v) => sql.lit(v)));

async function addOrderSla(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('agencies')
    .addColumn('order_sla_days', 'integer', (c) =>
      c.notNull().defaultTo(7).check(sql`order_sla_days between 0 and 365`),
    )
    .execute();
}

async function createOrders(db: Kysely<any>): Promise<void> {
  const reference = (column: string, target: string) => (t: CreateTableBuilder<string, any>) =>
    t
      .addColumn(column, 'text', (c) => c.notNull())
      .addForeignKeyConstraint(`physician_orders_${column}_fk`, ['agency_id', column], target, ['agency_id', 'id']);
  await db.schema
    .createTable('physician_orders')
    .addColumn('agency_id', 'text', (c) => c.notNull())
    // A no_phi session addresses orders by OR- handles: no real id may look like one, so a path is never ambiguous.
    .addColumn('id', 'text', (c) => c.notNull().check(sql`id !~ '^OR-'`))
    .addPrimaryKeyConstraint('physician_orders_pk', ['agency_id', 'id'])
    .$call(reference('patient_id', 'patients'))
    .$call(reference('physician_id', 'physicians'))
    // Its time zone is the one aging days are counted in (src/domain/physician-orders/aging.ts).
    .$call(reference('office_id', 'offices'))
    .addColumn('order_type', 'text', (c) => c.notNull().check(sql`order_type in (${list(ORDER_TYPES)})`))
    .addColumn('signature_status', 'text', (c) =>
      c.notNull().check(sql`signature_status in (${list(SIGNATURE_STATUSES)})`),
    )
    .addColumn('delivery_method', 'text', (c) => c.check(sql`delivery_method in (${list(DELIVERY_METHODS)})`))
    .addColumn('sent_at', 'timestamptz')
    .addColumn('signed_at', 'timestamptz')
    .addColumn('received_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint(
      'physician_orders_sent',
      sql`(sent_at is null) = (delivery_method is null) and sent_at >= created_at`,
    )
    .addCheckConstraint(
      'physician_orders_signed',
      sql`(signature_status = 'signed') = (signed_at is not null) and signed_at >= sent_at`,
    )
    .addCheckConstraint(
      'physician_orders_received',
      sql`received_at is null or (signed_at is not null and received_at >= signed_at)`,
    )
    .execute();
}

/** Newest first (created_at desc, id desc), alone and after each filter a tracker pins; awaiting orders for aging. */
async function createIndexes(db: Kysely<any>): Promise<void> {
  const newest = ['created_at desc', 'id desc'];
  await db.schema
    .createIndex('physician_orders_created_idx')
    .on('physician_orders')
    .columns(['agency_id', ...newest])
    .execute();
  for (const filter of ['patient_id', 'physician_id', 'signature_status']) {
    await db.schema
      .createIndex(`physician_orders_${filter}_idx`)
      .on('physician_orders')
      .columns(['agency_id', filter, ...newest])
      .execute();
  }
  // The aging summary reads every awaiting order of the filtered set: only these, with what aging needs.
  await db.schema
    .createIndex('physician_orders_awaiting_idx')
    .on('physician_orders')
    .columns(['agency_id', 'sent_at', 'office_id'])
    .where(sql.ref('signature_status'), '=', 'awaiting_signature')
    .execute();
}

export async function up(db: Kysely<any>): Promise<void> {
  await addOrderSla(db);
  await createOrders(db);
  await createIndexes(db);
}
