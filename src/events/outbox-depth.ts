import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { MetricsRegistrar } from '../observability/metrics.js';

interface OutboxDepth {
  unfanned: number;
  due: number;
  scheduled: number;
  held: number;
  oldest_due_seconds: number;
}

/**
 * The outbox as the database has it now, whichever processes run the webhooks worker. Pending and held deliveries of
 * enabled subscriptions only: a disabled subscription's wait for an administrator is not a backlog. Reads the partial
 * indexes of unfanned events, pending and held deliveries, never the delivered history.
 */
async function readDepth(db: Kysely<DB>): Promise<OutboxDepth> {
  const { rows } = await sql<OutboxDepth>`
    with waiting as (
      select d.status, d.next_attempt_at from webhook_deliveries d
      join webhook_subscriptions s on s.agency_id = d.agency_id and s.id = d.subscription_id
      where (d.status = 'pending' or d.status = 'held') and s.status = 'enabled'
    )
    select
      (select count(*) from webhook_events where fanned_out_at is null)::int as unfanned,
      (count(*) filter (where status = 'pending' and next_attempt_at <= now()))::int as due,
      (count(*) filter (where status = 'pending' and next_attempt_at > now()))::int as scheduled,
      (count(*) filter (where status = 'held'))::int as held,
      coalesce(extract(epoch from now() - min(next_attempt_at) filter (where status = 'pending' and next_attempt_at <= now())), 0)::float8 as oldest_due_seconds
    from waiting`.execute(db);
  return rows[0];
}

const UNKNOWN: OutboxDepth = { unfanned: NaN, due: NaN, scheduled: NaN, held: NaN, oldest_due_seconds: NaN };

/**
 * Gauges of the webhook outbox's depth, read from the database when /metrics is scraped (one query per scrape, none on
 * the request path); NaN when the database could not be read, so the rest of the scrape still answers.
 */
export function watchOutboxDepth(db: Kysely<DB>, metrics: MetricsRegistrar): void {
  // The gauges of one scrape are collected together: they share the read in flight.
  let reading: Promise<OutboxDepth> | undefined;
  const depth = () =>
    (reading ??= readDepth(db)
      .catch(() => UNKNOWN)
      .finally(() => {
        reading = undefined;
      }));
  metrics.gauge({
    name: 'extension_api_webhook_events_unfanned',
    help: 'Webhook events written whose deliveries the webhooks worker has not made yet.',
    async collect() {
      this.set((await depth()).unfanned);
    },
  });
  metrics.gauge({
    name: 'extension_api_webhook_deliveries_waiting',
    help: 'Deliveries of enabled subscriptions not yet delivered nor failed: due now (due), waiting for a retry or in flight (scheduled), held until the BAA is signed (held).',
    labelNames: ['state'],
    async collect() {
      const { due, scheduled, held } = await depth();
      this.set({ state: 'due' }, due);
      this.set({ state: 'scheduled' }, scheduled);
      this.set({ state: 'held' }, held);
    },
  });
  metrics.gauge({
    name: 'extension_api_webhook_oldest_due_seconds',
    help: 'How long the oldest due delivery has waited past its due time (0 when none is due).',
    async collect() {
      this.set((await depth()).oldest_due_seconds);
    },
  });
}
