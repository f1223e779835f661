import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { webhookEvents } from '../generated/contract.js';
import type { PhiMode } from '../shared/principal.js';

/**
 * The outbox's two queues in SQL, shared by any number of workers on one database: events waiting for their
 * deliveries, and deliveries due for an attempt. Both are claimed with FOR UPDATE SKIP LOCKED, so two workers never
 * take the same row; a claimed attempt holds a lease (its next_attempt_at), so one whose worker died is due again
 * when the lease ends, and its attempt count fences off the late outcome of the dead worker's attempt.
 */

const CLINICAL_TYPES = Object.entries(webhookEvents)
  .filter(([, event]) => event.clinical)
  .map(([type]) => type);

/**
 * Makes the deliveries of up to `limit` events: one per enabled subscription of the agency to the event's type that
 * existed when the event was written; held when the event is clinical and the subscription's BAA is not signed.
 */
export async function fanOut(db: Kysely<DB>, limit: number): Promise<number> {
  const { rows } = await sql<{ events: number }>`
    with due as (
      select agency_id, id, seq, type, created_at from webhook_events
      where fanned_out_at is null order by seq limit ${limit} for update skip locked
    ), subscriptions as (
      -- Shared locks order this with a BAA being recorded (recordBaaSigned updates the row): whichever comes second
      -- sees the other's work, so no delivery is written held for a subscription whose BAA is already signed.
      select agency_id, id, status, event_types, baa_signed_at, created_at from webhook_subscriptions
      where agency_id in (select agency_id from due) for share
    ), made as (
      insert into webhook_deliveries (agency_id, id, subscription_id, event_id, event_seq, status, next_attempt_at)
      select due.agency_id, 'whd_' || replace(gen_random_uuid()::text, '-', ''), s.id, due.id, due.seq,
        case when s.baa_signed_at is null and due.type = any(${sql.val(CLINICAL_TYPES)}::text[]) then 'held' else 'pending' end, now()
      from due join subscriptions s on s.agency_id = due.agency_id
      where s.status = 'enabled' and due.type = any(s.event_types) and s.created_at <= due.created_at
      order by due.seq
      on conflict do nothing
    )
    update webhook_events e set fanned_out_at = now() from due
    where e.agency_id = due.agency_id and e.id = due.id
    returning 1 as events`.execute(db);
  return rows.length;
}

export interface ClaimedDelivery {
  agency_id: string;
  id: string;
  subscription_id: string;
  /** This attempt's number: the fence of its outcome. */
  attempts: number;
  event_id: string;
  type: string;
  data: Record<string, unknown>;
  event_created_at: Date;
  /** The W3C trace context of the call that emitted the event; null when it was not traced. */
  traceparent: string | null;
  tracestate: string | null;
  url: string;
  phi_mode: PhiMode;
  allow_http_loopback: boolean;
}

/**
 * Claims up to `limit` due deliveries of enabled subscriptions, oldest due first and then in event order. While the
 * deliveries a subscription's BAA released (those made before it was signed) are being sent, its first attempts go one
 * at a time in event order: a first attempt waits for each earlier released delivery's first attempt to end, so a
 * receiver gets the backlog in event order and newer events after it. Retries keep their own schedule.
 */
export async function claimDue(db: Kysely<DB>, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
  const { rows } = await sql<ClaimedDelivery>`
    with due as (
      select d.agency_id, d.id from webhook_deliveries d
      join webhook_subscriptions s on s.agency_id = d.agency_id and s.id = d.subscription_id and s.status = 'enabled'
      where d.status = 'pending' and d.next_attempt_at <= now()
        and not (d.attempts = 0 and exists (
          select 1 from webhook_deliveries r
          where r.agency_id = d.agency_id and r.subscription_id = d.subscription_id and r.status = 'pending' and r.id <> d.id
            and r.created_at < s.baa_signed_at
            -- older and not attempted yet, or attempted with no failure recorded: its first attempt is under way
            and (r.attempts = 0 and r.event_seq < d.event_seq or r.attempts > 0 and r.last_error is null)))
      order by d.next_attempt_at, d.event_seq limit ${limit} for update of d skip locked
    )
    update webhook_deliveries d
    set attempts = d.attempts + 1, last_attempt_at = now(), next_attempt_at = now() + ${sql.lit(leaseMs)} * interval '1 millisecond'
    from due, webhook_events e, webhook_subscriptions s
    where d.agency_id = due.agency_id and d.id = due.id
      and e.agency_id = d.agency_id and e.id = d.event_id
      and s.agency_id = d.agency_id and s.id = d.subscription_id
    returning d.agency_id, d.id, d.subscription_id, d.attempts, d.event_id, e.type, e.data, e.created_at as event_created_at,
      e.traceparent, e.tracestate, s.url, s.phi_mode, s.allow_http_loopback`.execute(db);
  return rows;
}

/** An attempt as the delivery's history keeps it. */
export interface AttemptRecord {
  attemptedAt: Date;
  latencyMs: number;
  /** The receiver's status; null when none came. */
  statusCode: number | null;
  error: string | null;
}

/** Adds the attempt to the delivery's history (the console's deliveries page), whatever its outcome. */
export async function recordAttempt(db: Kysely<DB>, claimed: ClaimedDelivery, attempt: AttemptRecord): Promise<void> {
  await db
    .insertInto('webhook_delivery_attempts')
    .values({
      agency_id: claimed.agency_id,
      delivery_id: claimed.id,
      attempt: claimed.attempts,
      attempted_at: attempt.attemptedAt,
      latency_ms: Math.round(attempt.latencyMs),
      status_code: attempt.statusCode,
      error: attempt.error?.slice(0, 500) ?? null,
    })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

export type AttemptOutcome =
  | { delivered: true; status: number }
  | { delivered: false; status?: number; error: string; retryInMs: number | null; gone: boolean };

/**
 * What recording an attempt did: the delivery delivered (with the seconds from its event's creation, on the database's
 * clock), due again later, failed for good, failed and its subscription disabled, or nothing because another attempt
 * of the delivery was claimed since (superseded).
 */
export type RecordedOutcome =
  | { outcome: 'delivered'; lagSeconds: number }
  | { outcome: 'retry' | 'failed' | 'disabled' | 'superseded' };

/**
 * Records an attempt's outcome, unless another attempt of the delivery has been claimed since (the lease ran out).
 * A failure with no retry left fails the delivery; 410 Gone, or failing since `disableAfterMs` ago, disables the
 * subscription with the reason. A success clears the subscription's failing streak.
 */
export async function recordOutcome(
  db: Kysely<DB>,
  claimed: ClaimedDelivery,
  outcome: AttemptOutcome,
  disableAfterMs: number,
): Promise<RecordedOutcome> {
  const fence = (q: ReturnType<typeof update>) =>
    q
      .where('agency_id', '=', claimed.agency_id)
      .where('id', '=', claimed.id)
      .where('attempts', '=', claimed.attempts)
      .where('status', '=', 'pending');
  const update = () => db.updateTable('webhook_deliveries');
  const subscription = () =>
    db
      .updateTable('webhook_subscriptions')
      .where('agency_id', '=', claimed.agency_id)
      .where('id', '=', claimed.subscription_id);
  if (outcome.delivered) {
    // One round trip: the success, the end of the subscription's failing streak if it had one, and the event's age.
    const { rows } = await sql<{ lag_seconds: number }>`
      with done as (
        update webhook_deliveries set status = 'delivered', delivered_at = now(), last_status_code = ${outcome.status}, last_error = null
        where agency_id = ${claimed.agency_id} and id = ${claimed.id} and attempts = ${claimed.attempts} and status = 'pending'
        returning agency_id, subscription_id, event_id, delivered_at
      ), streak_ended as (
        update webhook_subscriptions s set failing_since = null from done
        where s.agency_id = done.agency_id and s.id = done.subscription_id and s.failing_since is not null
      )
      select extract(epoch from done.delivered_at - e.created_at)::float8 as lag_seconds
      from done join webhook_events e on e.agency_id = done.agency_id and e.id = done.event_id`.execute(db);
    return rows.length === 0
      ? { outcome: 'superseded' }
      : { outcome: 'delivered', lagSeconds: Number(rows[0].lag_seconds) };
  }
  const next =
    outcome.retryInMs === null || outcome.gone
      ? { status: 'failed' as const }
      : { next_attempt_at: sql<Date>`now() + ${sql.lit(Math.round(outcome.retryInMs))} * interval '1 millisecond'` };
  const recorded = await fence(update())
    .set({ ...next, last_status_code: outcome.status ?? null, last_error: outcome.error.slice(0, 500) })
    .executeTakeFirst();
  if (Number(recorded.numUpdatedRows) === 0) return { outcome: 'superseded' };
  const reason = outcome.gone
    ? sql<string>`'the receiver answered 410 Gone'`
    : sql<string>`case when failing_since < now() - ${sql.lit(disableAfterMs)} * interval '1 millisecond' then 'failing since ' || to_char(failing_since at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') end`;
  const streak = await subscription()
    .set({
      failing_since: sql<Date>`coalesce(failing_since, now())`,
      disabled_reason: sql<string>`coalesce(disabled_reason, ${reason})`,
      status: sql`case when coalesce(disabled_reason, ${reason}) is null then status else 'disabled' end`,
    })
    .returning('status')
    .executeTakeFirst();
  if (streak?.status === 'disabled') return { outcome: 'disabled' };
  return { outcome: 'status' in next ? 'failed' : 'retry' };
}
