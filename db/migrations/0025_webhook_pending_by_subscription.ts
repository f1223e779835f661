import { sql, type Kysely } from 'kysely';

/**
 * A subscription's pending deliveries made before a time, found without reading the others: claiming a first attempt
 * checks that none its BAA released (made before it was signed) is still waiting or in its first attempt (claimDue).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('webhook_deliveries_pending_idx')
    .on('webhook_deliveries')
    .columns(['agency_id', 'subscription_id', 'created_at'])
    .where(sql.ref('status'), '=', 'pending')
    .execute();
}
