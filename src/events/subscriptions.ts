import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { DeliveryStatus } from '../db/tables/webhooks.js';
import type { KeyEncryption } from '../identity/key-encryption.js';
import { webhookSecretRow } from '../identity/secrets-at-rest.js';
import type { PhiMode } from '../shared/principal.js';
import { randomId } from '../shared/ids.js';
import type { SigningSecrets } from './signing.js';

/** Subscriptions and their secrets, managed by the admin CLI (in the product, never through the partition). */

interface NewSubscription {
  agencyId: string;
  url: string;
  eventTypes: string[];
  phiMode: PhiMode;
  baaSigned: boolean;
  allowHttpLoopback: boolean;
  secret: string;
}

export async function createSubscription(db: Kysely<DB>, keys: KeyEncryption, input: NewSubscription): Promise<string> {
  const id = randomId('whsub_', 12);
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('webhook_subscriptions')
      .values({
        agency_id: input.agencyId,
        id,
        url: input.url,
        event_types: input.eventTypes,
        phi_mode: input.phiMode,
        baa_signed_at: input.baaSigned ? new Date() : null,
        allow_http_loopback: input.allowHttpLoopback,
      })
      .execute();
    await insertSecret(trx, keys, input.agencyId, id, input.secret);
  });
  return id;
}

async function insertSecret(
  db: Kysely<DB>,
  keys: KeyEncryption,
  agencyId: string,
  subscriptionId: string,
  secret: string,
): Promise<void> {
  const id = randomId('whsk_', 12);
  await db
    .insertInto('webhook_secrets')
    .values({
      agency_id: agencyId,
      subscription_id: subscriptionId,
      id,
      secret_sealed: keys.seal(secret, webhookSecretRow(id)),
    })
    .execute();
}

export async function findSubscription(db: Kysely<DB>, id: string) {
  return db.selectFrom('webhook_subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
}

export type SubscriptionRow = NonNullable<Awaited<ReturnType<typeof findSubscription>>>;

export function listSubscriptions(db: Kysely<DB>, agencyId: string) {
  return db
    .selectFrom('webhook_subscriptions')
    .selectAll()
    .where('agency_id', '=', agencyId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/**
 * A new current secret; the old one signs x-svc-signature-previous (and a second webhook-signature) until the
 * overlap ends. A secret already retiring from an earlier rotation retires now at the latest.
 */
export async function rotateSecret(
  db: Kysely<DB>,
  keys: KeyEncryption,
  subscription: SubscriptionRow,
  secret: string,
  overlapHours: number,
): Promise<Date> {
  const retiresAt = new Date(Date.now() + overlapHours * 3_600_000);
  await db.transaction().execute(async (trx) => {
    const owner = (q: typeof trx) =>
      q
        .updateTable('webhook_secrets')
        .where('agency_id', '=', subscription.agency_id)
        .where('subscription_id', '=', subscription.id);
    await owner(trx)
      .set({ retires_at: sql<Date>`least(retires_at, now())` })
      .where('retires_at', 'is not', null)
      .execute();
    await owner(trx).set({ retires_at: retiresAt }).where('retires_at', 'is', null).execute();
    await insertSecret(trx, keys, subscription.agency_id, subscription.id, secret);
  });
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

export async function setEnabled(db: Kysely<DB>, subscription: SubscriptionRow, enabled: boolean): Promise<void> {
  await db
    .updateTable('webhook_subscriptions')
    .set(
      enabled
        ? { status: 'enabled', disabled_reason: null, failing_since: null, updated_at: new Date() }
        : { status: 'disabled', disabled_reason: 'disabled by an administrator', updated_at: new Date() },
    )
    .where('agency_id', '=', subscription.agency_id)
    .where('id', '=', subscription.id)
    .execute();
}

/** Records the business associate agreement as signed and releases the held deliveries, oldest event first. */
export async function recordBaaSigned(db: Kysely<DB>, subscription: SubscriptionRow): Promise<number> {
  return db.transaction().execute(async (trx) => {
    await trx
      .updateTable('webhook_subscriptions')
      .set({ baa_signed_at: sql<Date>`coalesce(baa_signed_at, now())`, updated_at: new Date() })
      .where('agency_id', '=', subscription.agency_id)
      .where('id', '=', subscription.id)
      .execute();
    // One due time for all of them: workers then take them in event order (webhook_deliveries_due_idx).
    const released = await trx
      .updateTable('webhook_deliveries')
      .set({ status: 'pending', next_attempt_at: sql<Date>`now()` })
      .where('agency_id', '=', subscription.agency_id)
      .where('subscription_id', '=', subscription.id)
      .where('status', '=', 'held')
      .executeTakeFirst();
    return Number(released.numUpdatedRows);
  });
}

export function listDeliveries(
  db: Kysely<DB>,
  subscription: SubscriptionRow,
  status: DeliveryStatus | undefined,
  limit: number,
) {
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', (join) =>
      join.onRef('e.agency_id', '=', 'd.agency_id').onRef('e.id', '=', 'd.event_id'),
    )
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
    ])
    .where('d.agency_id', '=', subscription.agency_id)
    .where('d.subscription_id', '=', subscription.id)
    .$if(status !== undefined, (q) => q.where('d.status', '=', status!))
    .orderBy('d.event_seq', 'desc')
    .limit(limit)
    .execute();
}

type ReplayRefusal = 'unknown' | 'held' | 'pending';

/** The manual replay of a failed delivery: the same delivery (same id) due now, for one more attempt. */
export async function replayDelivery(
  db: Kysely<DB>,
  deliveryId: string,
): Promise<{ refused: ReplayRefusal } | { subscriptionId: string }> {
  const delivery = await db
    .selectFrom('webhook_deliveries')
    .select(['agency_id', 'subscription_id', 'status'])
    .where('id', '=', deliveryId)
    .executeTakeFirst();
  if (!delivery) return { refused: 'unknown' };
  if (delivery.status === 'held' || delivery.status === 'pending') return { refused: delivery.status };
  const updated = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', next_attempt_at: sql<Date>`now()` })
    .where('agency_id', '=', delivery.agency_id)
    .where('id', '=', deliveryId)
    .where('status', 'in', ['delivered', 'failed'])
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) === 1 ? { subscriptionId: delivery.subscription_id } : { refused: 'pending' };
}
