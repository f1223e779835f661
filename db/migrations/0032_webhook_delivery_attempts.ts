import { sql, type Kysely } from 'kysely';

/**
 * Each attempt of a webhook delivery as the worker made it (when, the receiver's status, how long it took, the
 * error), for the console's deliveries page; the delivery row keeps only the last one. Deleted with the delivery.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_delivery_attempts')
    .addColumn('agency_id', 'text', (c) => c.notNull())
    .addColumn('delivery_id', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_delivery_attempts_pk', ['agency_id', 'delivery_id', 'attempt'])
    .addForeignKeyConstraint(
      'webhook_delivery_attempts_delivery_fk',
      ['agency_id', 'delivery_id'],
      'webhook_deliveries',
      ['agency_id', 'id'],
      (fk) => fk.onDelete('cascade'),
    )
    .addColumn('attempted_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('status_code', 'integer')
    .addColumn('latency_ms', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .execute();
}
