import { sql, type Kysely } from 'kysely';

/**
 * Held deliveries (a clinical event for a subscription whose BAA is not signed), found without reading every
 * delivery: the outbox's depth metrics count them on each scrape, as the pending ones are by webhook_deliveries_due_idx.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('webhook_deliveries_held_idx')
    .on('webhook_deliveries')
    .columns(['agency_id', 'subscription_id'])
    .where(sql.ref('status'), '=', 'held')
    .execute();
}
