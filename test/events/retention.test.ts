import t from 'tap';
import { sql } from 'kysely';
import { createAgency } from '../../src/admin/agency.js';
import { webhookCommands } from '../../src/admin/webhook.js';
import { loadConfig } from '../../src/config.js';
import { purgeWebhookHistory, WEBHOOK_RETENTION_DAYS } from '../../src/events/retention.js';
import { testDatabase } from '../helpers/database.js';
import { testKeyEncryption } from '../helpers/secrets.js';

const { db } = await testDatabase();
const agencyId = 'webhook-retention';
await createAgency(db, { id: agencyId, name: 'Retention agency', serviceZips: ['02108'] });
const { json } = await webhookCommands.subscribe.run({
  db,
  config: loadConfig({}),
  options: {
    agency: agencyId,
    url: 'http://127.0.0.1:9/hooks',
    events: 'task.created',
    'allow-http-loopback': true,
    'phi-mode': 'no_phi',
  },
  keyEncryption: () => testKeyEncryption,
});
const subscriptionId = json.subscription_id as string;
const DAY_MS = 86_400_000;

/** An event written `daysAgo` days ago, with one delivery in `status` (none when null). */
async function event(id: string, daysAgo: number, status: 'held' | 'pending' | 'delivered' | 'failed' | null) {
  const createdAt = new Date(Date.now() - daysAgo * DAY_MS);
  const { seq } = await db
    .insertInto('webhook_events')
    .values({
      agency_id: agencyId,
      id,
      type: 'task.created',
      data: JSON.stringify({ id: 'task_1' }),
      created_at: createdAt,
      fanned_out_at: createdAt,
    })
    .returning('seq')
    .executeTakeFirstOrThrow();
  if (status) {
    await db
      .insertInto('webhook_deliveries')
      .values({
        agency_id: agencyId,
        id: `whd_${id}`,
        subscription_id: subscriptionId,
        event_id: id,
        event_seq: seq,
        status,
      })
      .execute();
  }
}

const remaining = async () =>
  (await db.selectFrom('webhook_events').select('id').where('agency_id', '=', agencyId).orderBy('id').execute()).map(
    (row) => row.id,
  );

t.test('settled events past the retention go with their deliveries; held, pending and recent ones stay', async (t) => {
  await event('evt_old_delivered', WEBHOOK_RETENTION_DAYS + 1, 'delivered');
  await event('evt_old_failed', WEBHOOK_RETENTION_DAYS + 5, 'failed');
  await event('evt_old_no_subscriber', WEBHOOK_RETENTION_DAYS + 1, null);
  await event('evt_old_held', WEBHOOK_RETENTION_DAYS + 40, 'held');
  await event('evt_old_pending', WEBHOOK_RETENTION_DAYS + 2, 'pending');
  await event('evt_recent_delivered', WEBHOOK_RETENTION_DAYS - 1, 'delivered');
  await sql`update webhook_events set fanned_out_at = null where id = 'evt_old_pending'`.execute(db);

  const before = new Date(Date.now() - WEBHOOK_RETENTION_DAYS * DAY_MS);
  t.equal(await purgeWebhookHistory(db, before, 2), 3, 'batches of 2 until one comes back short');
  t.equal(await purgeWebhookHistory(db, before), 0, 'nothing more');
  t.same(await remaining(), ['evt_old_held', 'evt_old_pending', 'evt_recent_delivered']);
  const deliveries = await db
    .selectFrom('webhook_deliveries')
    .select('event_id')
    .where('agency_id', '=', agencyId)
    .orderBy('event_id')
    .execute();
  t.same(
    deliveries.map((row) => row.event_id),
    ['evt_old_held', 'evt_old_pending', 'evt_recent_delivered'],
    "the purged events' deliveries are gone with them",
  );
});
