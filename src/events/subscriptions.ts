import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { CommandStore, TenantStore } from '../db/tenant-store.js';
import type { DeliveryStatus } from '../db/tables/webhooks.js';
import type { KeyEncryption } from '../identity/key-encryption.js';
import { webhookSecretRow } from '../identity/secrets-at-rest.js';
import type { PhiMode } from '../shared/principal.js';
import { randomId } from '../shared/ids.js';
import type { SigningSecrets } from './signing.js';
import { webhookEvents } from '../generated/contract.js';

/** Subscriptions and their secrets, managed by the admin CLI (in the product, never through the partition). */

/** The event types a subscription may name: every one of the contract's but those sent on request (webhook.test). */
export const SUBSCRIBABLE_EVENT_TYPES = Object.entries(webhookEvents)
  .filter(([, event]) => event.subscribable)
  .map(([type]) => type);

export const TEST_EVENT_MESSAGE =
  'A test event an administrator of the agency asked for; it carries no patient data and no person. Acknowledge it with 2XX.';

/**
 * A webhook.test event for one subscription only: the event (already fanned out, so no other subscription gets it)
 * and its one pending delivery, in the store's transaction; the delivery worker sends it as any other. Its id.
 */
export async function queueTestDelivery(store: CommandStore, subscriptionId: string): Promise<string> {
  const data = { subscription_id: subscriptionId, message: TEST_EVENT_MESSAGE };
  const event = await store
    .insertInto('webhook_events')
    .values({ id: randomId('evt_', 12), type: 'webhook.test', data: JSON.stringify(data), fanned_out_at: new Date() })
    .returning(['id', 'seq'])
    .executeTakeFirstOrThrow();
  const deliveryId = randomId('whd_', 16);
  await store
    .insertInto('webhook_deliveries')
    .values({
      id: deliveryId,
      subscription_id: subscriptionId,
      event_id: event.id,
      event_seq: event.seq,
      status: 'pending',
      next_attempt_at: new Date(),
    })
    .execute();
  return deliveryId;
}

interface NewSubscription {
  url: string;
  eventTypes: string[];
  phiMode: PhiMode;
  baaSigned: boolean;
  allowHttpLoopback: boolean;
  secret: string;
}

/** A subscription of the store's agency, with its first secret. */
export async function createSubscription(
  store: CommandStore,
  keys: KeyEncryption,
  input: NewSubscription,
): Promise<string> {
  const id = randomId('whsub_', 12);
  await store
    .insertInto('webhook_subscriptions')
    .values({
      id,
      url: input.url,
      event_types: input.eventTypes,
      phi_mode: input.phiMode,
      baa_signed_at: input.baaSigned ? new Date() : null,
      allow_http_loopback: input.allowHttpLoopback,
    })
    .execute();
  await insertSecret(store, keys, id, input.secret);
  return id;
}

async function insertSecret(
  store: CommandStore,
  keys: KeyEncryption,
  subscriptionId: string,
  secret: string,
): Promise<void> {
  const id = randomId('whsk_', 12);
  await store
    .insertInto('webhook_secrets')
    .values({ subscription_id: subscriptionId, id, secret_sealed: keys.seal(secret, webhookSecretRow(id)) })
    .execute();
}

/** A subscription by its id, whichever agency's: how the admin CLI names one. */
export async function findSubscription(db: Kysely<DB>, id: string) {
  return db.selectFrom('webhook_subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
}

export type SubscriptionRow = NonNullable<Awaited<ReturnType<typeof findSubscription>>>;

/** A subscription of the store's agency by its id (none for another agency's id). */
export function subscriptionOf(store: TenantStore, id: string): Promise<SubscriptionRow | undefined> {
  return store.selectFrom('webhook_subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
}

export function listSubscriptions(store: TenantStore) {
  return store.selectFrom('webhook_subscriptions').selectAll().orderBy('created_at').orderBy('id').execute();
}

/**
 * A new current secret; the old one signs x-svc-signature-previous (and a second webhook-signature) until the
 * overlap ends. A secret already retiring from an earlier rotation retires now at the latest.
 */
export async function rotateSecret(
  store: CommandStore,
  keys: KeyEncryption,
  subscription: SubscriptionRow,
  secret: string,
  overlapHours: number,
): Promise<Date> {
  const retiresAt = new Date(Date.now() + overlapHours * 3_600_000);
  const owned = () => store.updateTable('webhook_secrets').where('subscription_id', '=', subscription.id);
  await owned().set({ retires_at: sql<Date>`least(retires_at, now())` }).where('retires_at', 'is not', null).execute();
  await owned().set({ retires_at: retiresAt }).where('retires_at', 'is', null).execute();
  await insertSecret(store, keys, subscription.id, secret);
  return retiresAt;
}

/** The current secret and the retiring one still in its overlap, of each subscription named, opened. */
export async function signingSecrets(
  db: Kysely<DB>,
  keys: KeyEncryption,
  subscriptions: { agency_id: string; id: string }[],
): Promise<Map<string, SigningSecrets>> {
  if (subscriptions.length === 0) return new Map();
  const rows = await db
    .selectFrom('webhook_secrets')
    .select(['subscription_id', 'id', 'secret_sealed', 'retires_at'])
    .where((eb) =>
      eb.or(subscriptions.map((s) => eb.and([eb('agency_id', '=', s.agency_id), eb('subscription_id', '=', s.id)]))),
    )
    .where((eb) => eb.or([eb('retires_at', 'is', null), eb('retires_at', '>', sql<Date>`now()`)]))
    .orderBy('created_at', 'desc')
    .execute();
  const found = new Map<string, Partial<SigningSecrets>>();
  for (const row of rows) {
    const text = keys.open(row.secret_sealed, webhookSecretRow(row.id)).toString('utf8');
    const entry = found.get(row.subscription_id) ?? {};
    // Newest first: of two secrets still retiring, the newer one signs the previous signature.
    if (row.retires_at === null) entry.current = text;
    else entry.previous ??= text;
    found.set(row.subscription_id, entry);
  }
  return new Map([...found].filter((pair): pair is [string, SigningSecrets] => pair[1].current !== undefined));
}

export async function setEnabled(store: CommandStore, subscription: SubscriptionRow, enabled: boolean): Promise<void> {
  await store
    .updateTable('webhook_subscriptions')
    .set(
      enabled
        ? { status: 'enabled', disabled_reason: null, failing_since: null, updated_at: new Date() }
        : { status: 'disabled', disabled_reason: 'disabled by an administrator', updated_at: new Date() },
    )
    .where('id', '=', subscription.id)
    .execute();
}

/** A delivery released or replayed: the same delivery, pending and due now, for its next attempt. */
const DUE_NOW = { status: 'pending', next_attempt_at: sql<Date>`now()` } as const;

/** Records the business associate agreement as signed and releases the held deliveries, oldest event first. */
export async function recordBaaSigned(store: CommandStore, subscription: SubscriptionRow): Promise<number> {
  await store
    .updateTable('webhook_subscriptions')
    .set({ baa_signed_at: sql<Date>`coalesce(baa_signed_at, now())`, updated_at: new Date() })
    .where('id', '=', subscription.id)
    .execute();
  // One due time for all of them: workers then take them in event order (webhook_deliveries_due_idx).
  const released = await store
    .updateTable('webhook_deliveries')
    .set(DUE_NOW)
    .where('subscription_id', '=', subscription.id)
    .where('status', '=', 'held')
    .executeTakeFirst();
  return Number(released.numUpdatedRows);
}

export function listDeliveries(
  store: TenantStore,
  subscription: SubscriptionRow,
  status: DeliveryStatus | undefined,
  limit: number,
  beforeSeq?: number,
) {
  return store
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', (join) => join.on(store.ofAgency('e')).onRef('e.id', '=', 'd.event_id'))
    .select([
      'd.id',
      'd.event_id',
      'e.type',
      'd.status',
      'd.attempts',
      'd.next_attempt_at',
      'd.last_attempt_at',
      'd.last_status_code',
      'd.last_error',
      'd.delivered_at',
      'd.created_at',
      'd.event_seq',
    ])
    .where('d.subscription_id', '=', subscription.id)
    .$if(status !== undefined, (q) => q.where('d.status', '=', status!))
    .$if(beforeSeq !== undefined, (q) => q.where('d.event_seq', '<', beforeSeq!))
    .orderBy('d.event_seq', 'desc')
    .limit(limit)
    .execute();
}

/** The attempts of the deliveries named, in the store's agency, each delivery's in the order they were made. */
export function attemptsOf(store: TenantStore, deliveryIds: readonly string[]) {
  if (deliveryIds.length === 0) return Promise.resolve([]);
  return store
    .selectFrom('webhook_delivery_attempts')
    .select(['delivery_id', 'attempt', 'attempted_at', 'status_code', 'latency_ms', 'error'])
    .where('delivery_id', 'in', deliveryIds)
    .orderBy('delivery_id')
    .orderBy('attempt')
    .execute();
}

export type DeliveryAttempt = Awaited<ReturnType<typeof attemptsOf>>[number];

/** How many deliveries of each of the agency's subscriptions (or of the one named) are in each status. */
export function deliveryCounts(store: TenantStore, subscriptionId?: string) {
  return store
    .selectFrom('webhook_deliveries')
    .select(['subscription_id', 'status', (eb) => eb.fn.countAll<string>().as('count')])
    .$if(subscriptionId !== undefined, (q) => q.where('subscription_id', '=', subscriptionId!))
    .groupBy(['subscription_id', 'status'])
    .execute();
}

/**
 * Every failed delivery of the subscription made since `since` due again now, in one statement (as replayDelivery does
 * one, whose status check it shares: a delivery another replay already made pending is left as it is). How many.
 */
export async function replayFailedSince(store: CommandStore, subscription: SubscriptionRow, since: Date) {
  const replayed = await store
    .updateTable('webhook_deliveries')
    .set(DUE_NOW)
    .where('subscription_id', '=', subscription.id)
    .where('status', '=', 'failed')
    .where('created_at', '>=', since)
    .executeTakeFirst();
  return Number(replayed.numUpdatedRows);
}

type ReplayRefusal = 'held' | 'pending';

/** A delivery by its id, whichever agency's: how the admin CLI names one. */
export function findDelivery(db: Kysely<DB>, deliveryId: string) {
  return db
    .selectFrom('webhook_deliveries')
    .select(['agency_id', 'id', 'subscription_id', 'status'])
    .where('id', '=', deliveryId)
    .executeTakeFirst();
}

/** A delivery of the subscription by its id, in the store's agency. */
export function deliveryOf(store: TenantStore, subscription: SubscriptionRow, deliveryId: string) {
  return store
    .selectFrom('webhook_deliveries')
    .select(['agency_id', 'id', 'subscription_id', 'status'])
    .where('subscription_id', '=', subscription.id)
    .where('id', '=', deliveryId)
    .executeTakeFirst();
}

/** The manual replay of a failed delivery: the same delivery (same id) due now, for one more attempt. */
export async function replayDelivery(
  store: CommandStore,
  delivery: { id: string; status: DeliveryStatus },
): Promise<{ refused: ReplayRefusal } | undefined> {
  if (delivery.status === 'held' || delivery.status === 'pending') return { refused: delivery.status };
  const updated = await store
    .updateTable('webhook_deliveries')
    .set(DUE_NOW)
    .where('id', '=', delivery.id)
    .where('status', 'in', ['delivered', 'failed'])
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) === 1 ? undefined : { refused: 'pending' };
}
