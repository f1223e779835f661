import { sql, type Kysely } from 'kysely';

/** Housekeeping's purge of settled webhook history: old events found by age, their deliveries by event. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('webhook_events_fanned_out_age_idx')
    .on('webhook_events')
    .column('created_at')
    .where(sql.ref('fanned_out_at'), 'is not', null)
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_event_idx')
    .on('webhook_deliveries')
    .columns(['agency_id', 'event_id'])
    .execute();
}
