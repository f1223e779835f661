import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';

/** How long an event and its deliveries stay for `webhook replay` and support questions (Stripe keeps 30 days too). */
export const WEBHOOK_RETENTION_DAYS = 30;

/**
 * Deletes the events written before `before` whose deliveries are all settled (delivered or failed), with those
 * deliveries, a batch at a time until a batch comes back short. An event still held for a BAA or pending a retry
 * stays, however old.
 */
export async function purgeWebhookHistory(db: Kysely<DB>, before: Date, batchSize = 5000): Promise<number> {
  let purged = 0;
  for (;;) {
    const deleted = await purgeBatch(db, before, batchSize);
    purged += deleted;
    if (deleted < batchSize) return purged;
  }
}

async function purgeBatch(db: Kysely<DB>, before: Date, limit: number): Promise<number> {
  const { rows } = await sql<{ id: string }>`
    with old as (
      select e.agency_id, e.id from webhook_events e
      where e.created_at < ${before} and e.fanned_out_at is not null
        and not exists (
          select 1 from webhook_deliveries d
          where d.agency_id = e.agency_id and d.event_id = e.id and d.status in ('held', 'pending')
        )
      order by e.created_at limit ${limit} for update skip locked
    ), deliveries as (
      delete from webhook_deliveries d using old where d.agency_id = old.agency_id and d.event_id = old.id
    )
    delete from webhook_events e using old where e.agency_id = old.agency_id and e.id = old.id
    returning e.id`.execute(db);
  return rows.length;
}
