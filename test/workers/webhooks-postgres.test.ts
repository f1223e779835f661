import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { webhookCommands } from '../../src/admin/webhook.js';
import { loadConfig } from '../../src/config.js';
import { createAgency } from '../../src/admin/agency.js';
import { claimDue, fanOut } from '../../src/events/delivery-queue.js';
import { findSubscription } from '../../src/events/subscriptions.js';
import { webhookOutbox } from '../../src/events/outbox.js';
import { verifyDelivery } from '../../src/events/verify-delivery.js';
import { secondPool, testDatabase } from '../helpers/database.js';
import { testKeyEncryption } from '../helpers/secrets.js';
import { startReceiver, startWebhookWorker } from '../helpers/webhook-receiver.js';

const skip = process.env.TEST_DATABASE_URL
  ? false
  : 'needs real PostgreSQL: SKIP LOCKED shows concurrency only with several connections';

/** Commands' events as createTask writes them, many per transaction to keep the set-up short. */
async function writeEvents(
  db: Awaited<ReturnType<typeof testDatabase>>['db'],
  agencyId: string,
  count: number,
): Promise<void> {
  for (let start = 0; start < count; start += 250) {
    await db.transaction().execute(async (trx) => {
      const batch = Array.from({ length: Math.min(count, start + 250) - start }, (_, i) => ({
        type: 'task.created',
        data: { n: start + i },
      }));
      await webhookOutbox(trx, agencyId, batch);
    });
  }
}

async function subscribed(agencyId: string, url: string): Promise<string> {
  const { db } = await testDatabase();
  await createAgency(db, { id: agencyId, name: agencyId, serviceZips: ['02108'] });
  const { json } = await webhookCommands.subscribe.run({
    db,
    config: loadConfig({}),
    keyEncryption: () => testKeyEncryption,
    options: { agency: agencyId, url, events: 'task.created', 'allow-http-loopback': true, 'baa-signed': true },
  });
  return json.signing_secret as string;
}

t.test(
  'two workers on one database, a few thousand events, a receiver failing at random: each event delivered once as one delivery',
  { skip },
  async (t) => {
    const { db } = await testDatabase();
    const other = await secondPool(t, 10);
    const receiver = await startReceiver(t, () => (Math.random() < 0.3 ? 500 : 200));
    const agencyId = `agency-two-workers-${Date.now()}`;
    const secret = await subscribed(agencyId, receiver.url);
    const events = 2_000;
    await writeEvents(db, agencyId, events);
    const retries = Array.from({ length: 30 }, () => 20);
    startWebhookWorker(t, db, { retryDelaysMs: retries });
    startWebhookWorker(t, other, { retryDelaysMs: retries });
    const deadline = Date.now() + 60_000;
    const succeeded = () => receiver.received.filter((r) => r.status === 200);
    while (new Set(succeeded().map((r) => r.headers['x-svc-delivery-id'])).size < events && Date.now() < deadline)
      await sleep(50);
    const ok = succeeded();
    const deliveryIds = ok.map((r) => String(r.headers['x-svc-delivery-id']));
    t.equal(new Set(deliveryIds).size, events, 'every event delivered');
    t.equal(deliveryIds.length, events, 'none delivered twice');
    const eventIds = new Set(ok.map((r) => verifyDelivery(r.rawBody, r.headers, secret).id));
    t.equal(eventIds.size, events, 'one delivery per event: no event became two deliveries');
    const failures = receiver.received.length - ok.length;
    t.ok(failures > events * 0.2, `the receiver failed ${failures} attempts, each retried under the same delivery id`);
    const rows = await db
      .selectFrom('webhook_deliveries')
      .select(['status'])
      .where('agency_id', '=', agencyId)
      .execute();
    t.equal(rows.length, events);
    await sleep(100);
    t.ok(
      (await db.selectFrom('webhook_deliveries').select('status').where('agency_id', '=', agencyId).execute()).every(
        (r) => r.status === 'delivered',
      ),
    );
  },
);

t.test(
  'stopped and started mid-delivery, and a worker that died holding attempts: nothing lost, nothing delivered as a second delivery',
  { skip },
  async (t) => {
    const { db } = await testDatabase();
    const receiver = await startReceiver(t);
    const agencyId = `agency-restarts-${Date.now()}`;
    const secret = await subscribed(agencyId, receiver.url);
    const events = 600;
    await writeEvents(db, agencyId, events);
    // A worker that claimed 50 attempts and died: their leases end in 1 s, then another worker takes them.
    await fanOut(db, events);
    const abandoned = await claimDue(db, 50, 1_000);
    t.equal(abandoned.length, 50);
    // One worker stopped twice while it delivers (stop lets its attempts in flight finish), then a third one finishes.
    for (const runMs of [150, 150]) {
      const worker = startWebhookWorker(t, db, { leaseMs: 1_000 });
      await sleep(runMs);
      await worker.stop();
    }
    t.ok(receiver.received.length < events, `stopped part way (${receiver.received.length} of ${events})`);
    startWebhookWorker(t, db, { leaseMs: 1_000 });
    const deadline = Date.now() + 30_000;
    while (new Set(receiver.received.map((r) => r.headers['x-svc-delivery-id'])).size < events && Date.now() < deadline)
      await sleep(50);
    const ids = receiver.received.map((r) => String(r.headers['x-svc-delivery-id']));
    t.equal(new Set(ids).size, events, 'every event delivered, the abandoned ones after their lease');
    t.equal(ids.length, events, 'each once');
    t.equal(new Set(receiver.received.map((r) => verifyDelivery(r.rawBody, r.headers, secret).id)).size, events);
    const abandonedIds = new Set(abandoned.map((a) => a.id));
    t.equal(ids.filter((id) => abandonedIds.has(id)).length, 50, "the dead worker's attempts were retried, not lost");
    const attempts = await db
      .selectFrom('webhook_deliveries')
      .select(['id', 'attempts'])
      .where('agency_id', '=', agencyId)
      .execute();
    t.ok(
      attempts.filter((a) => abandonedIds.has(a.id)).every((a) => a.attempts === 2),
      'the abandoned attempt counts as one',
    );
  },
);

t.test(
  'a fan-out that runs while a BAA is being recorded waits for it: no delivery is left held for a signed subscription',
  { skip },
  async (t) => {
    const { db } = await testDatabase();
    const other = await secondPool(t, 2);
    const agencyId = `agency-baa-race-${Date.now()}`;
    await createAgency(db, { id: agencyId, name: agencyId, serviceZips: ['02108'] });
    const { json } = await webhookCommands.subscribe.run({
      db,
      config: loadConfig({}),
      keyEncryption: () => testKeyEncryption,
      options: {
        agency: agencyId,
        url: 'http://127.0.0.1:9/hooks',
        events: 'referral.created',
        'allow-http-loopback': true,
      },
    });
    await db
      .transaction()
      .execute((trx) => webhookOutbox(trx, agencyId, [{ type: 'referral.created', data: { id: 'ref_1' } }]));

    // recordBaaSigned on another connection, not yet committed: the subscription signed, its held deliveries (none yet)
    // released. A fan-out that did not wait would write the event's delivery held, and nothing would release it.
    const subscription = (await findSubscription(db, String(json.subscription_id)))!;
    let fannedOut: Promise<number> | undefined;
    await other.transaction().execute(async (trx) => {
      await trx
        .updateTable('webhook_subscriptions')
        .set({ baa_signed_at: new Date() })
        .where('agency_id', '=', agencyId)
        .where('id', '=', subscription.id)
        .execute();
      await trx
        .updateTable('webhook_deliveries')
        .set({ status: 'pending' })
        .where('agency_id', '=', agencyId)
        .where('subscription_id', '=', subscription.id)
        .where('status', '=', 'held')
        .execute();
      fannedOut = fanOut(db, 10);
      await sleep(300);
    });
    t.equal(await fannedOut, 1);
    const rows = await db.selectFrom('webhook_deliveries').select('status').where('agency_id', '=', agencyId).execute();
    t.same(rows, [{ status: 'pending' }], 'the fan-out saw the signed BAA');
  },
);
