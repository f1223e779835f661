import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { Webhook } from 'standardwebhooks';
import { webhookCommands } from '../../src/admin/webhook.js';
import { AdminError, type Command, type Options } from '../../src/admin/command.js';
import { loadConfig } from '../../src/config.js';
import { webhookEvents, type WebhookEventType } from '../../src/generated/contract.js';
import { verifyDelivery, type WebhookEnvelope } from '../../src/events/verify-delivery.js';
import { webhookSecretRow } from '../../src/identity/secrets-at-rest.js';
import { buildTestApp, signIn, type SignedInApi } from '../helpers/app.js';
import { testDatabase } from '../helpers/database.js';
import { testKeyEncryption } from '../helpers/secrets.js';
import { parsePrometheusText, sampleValue, type PrometheusSample } from '../helpers/prometheus-text.js';
import { fanOut } from '../../src/events/delivery-queue.js';
import { watchOutboxDepth } from '../../src/events/outbox-depth.js';
import { ServiceMetrics } from '../../src/observability/metrics.js';
import {
  startReceiver,
  startWebhookWorker,
  type ReceivedDelivery,
  type TestReceiver,
} from '../helpers/webhook-receiver.js';
import { until } from '../helpers/until.js';

const { db } = await testDatabase();
const api = await buildTestApp();
const phi = await signIn(api, { phiMode: 'phi' });
const agencyId = phi.integration.agencyId;
const noPhi = await signIn(api, { phiMode: 'no_phi', integration: { agencyId } });
const config = loadConfig({});

const admin = async (command: Command, options: Options) =>
  (await command.run({ db, config, options, keyEncryption: () => testKeyEncryption })).json;
async function refusal(command: Command, options: Options): Promise<string> {
  try {
    await admin(command, options);
    return 'accepted';
  } catch (err) {
    if (!(err instanceof AdminError)) throw err;
    return err.message;
  }
}

interface Subscribed {
  id: string;
  secret: string;
}

async function subscribe(receiver: TestReceiver, events: string, extra: Options = {}): Promise<Subscribed> {
  const json = await admin(webhookCommands.subscribe, {
    agency: agencyId,
    url: receiver.url,
    events,
    'allow-http-loopback': true,
    'baa-signed': true,
    'phi-mode': 'phi',
    ...extra,
  });
  return { id: json.subscription_id as string, secret: json.signing_secret as string };
}

const key = () => `wh-${Math.random().toString(36).slice(2, 14)}`;
const referralBody = (zip: string) => ({
  service_line: 'home_health',
  patient_first_name: 'Ada',
  patient_last_name: `Webhook${Math.random().toString(36).slice(2, 8)}`,
  patient_dob: '1942-03-04',
  patient_phone: '(617) 555-0100',
  patient_zip_code: zip,
});
const fileReferral = (session: SignedInApi, zip: string, idempotencyKey = key(), payload = referralBody(zip)) =>
  session.request({
    method: 'POST',
    url: '/api/v1/ext/referrals',
    headers: { 'idempotency-key': idempotencyKey },
    payload,
  });
const createTask = (title: string) =>
  phi.request({ method: 'POST', url: '/api/v1/ext/tasks', headers: { 'idempotency-key': key() }, payload: { title } });

/** Checks a delivery as a receiver would, with this library and with standardwebhooks, and against the contract. */
function verified(t: Test, delivery: ReceivedDelivery, secret: string): WebhookEnvelope {
  const envelope = verifyDelivery(delivery.rawBody, delivery.headers, secret);
  const headers = Object.fromEntries(Object.entries(delivery.headers).map(([k, v]) => [k, String(v)]));
  t.same(
    new Webhook(secret).verify(delivery.rawBody.toString('utf8'), headers),
    envelope,
    'standardwebhooks verifies it unchanged',
  );
  const validate = webhookEvents[envelope.type as WebhookEventType].validate;
  t.ok(
    validate(envelope),
    `${envelope.type} matches its schema in openapi.json webhooks ${JSON.stringify(validate.errors)}`,
  );
  return envelope;
}

const deliveryRow = (id: string) =>
  db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const subscriptionRow = (id: string) =>
  db.selectFrom('webhook_subscriptions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const eventCount = async () =>
  Number(
    (
      await db
        .selectFrom('webhook_events')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('agency_id', '=', agencyId)
        .executeTakeFirstOrThrow()
    ).n,
  );

t.test('the outbox metrics: its depth read from the database, attempts and lag counted by the worker', async (t) => {
  const metrics = new ServiceMetrics();
  watchOutboxDepth(db, metrics.registrar);
  const scrape = async () => parsePrometheusText(await metrics.text());
  const receiver = await startReceiver(t, (_id, nth) => (nth === 1 ? 503 : 200));
  const sent = await subscribe(receiver, 'task.created');
  const held = await subscribe(receiver, 'task.created', { 'baa-signed': false });
  t.teardown(async () => {
    for (const { id } of [sent, held]) await admin(webhookCommands.disable, { id });
  });
  const before = await scrape();
  const moved = (after: PrometheusSample[], name: string, labels: Record<string, string> = {}) =>
    sampleValue(after, name, labels) - sampleValue(before, name, labels);
  await createTask('Counted');
  const written = await scrape();
  t.equal(moved(written, 'extension_api_webhook_events_unfanned'), 1, 'the event waits for its deliveries');
  await fanOut(db, 10);
  const fanned = await scrape();
  t.equal(moved(fanned, 'extension_api_webhook_events_unfanned'), 0);
  t.equal(moved(fanned, 'extension_api_webhook_deliveries_waiting', { state: 'due' }), 1, 'one delivery due');
  t.equal(
    moved(fanned, 'extension_api_webhook_deliveries_waiting', { state: 'held' }),
    1,
    'one held: its BAA is not signed',
  );
  t.ok(sampleValue(fanned, 'extension_api_webhook_oldest_due_seconds') >= 0);

  startWebhookWorker(t, db, {}, { metrics: metrics.registrar });
  await receiver.waitFor(2);
  await until(
    'the delivery is recorded',
    async () =>
      ((await admin(webhookCommands.deliveries, { id: sent.id, status: 'delivered' })).deliveries as unknown[])
        .length === 1,
  );
  // The worker counts an attempt just after its row commits, so the scrape waits for the count, not the row.
  await until(
    'the delivery is counted',
    async () =>
      moved(await scrape(), 'extension_api_webhook_delivery_lag_seconds_count', { event_type: 'task.created' }) >= 1,
  );
  const text = await metrics.text();
  const delivered = parsePrometheusText(text);
  t.equal(
    moved(delivered, 'extension_api_webhook_delivery_attempts_total', { event_type: 'task.created', outcome: 'retry' }),
    1,
    'the 503',
  );
  t.equal(
    moved(delivered, 'extension_api_webhook_delivery_attempts_total', {
      event_type: 'task.created',
      outcome: 'delivered',
    }),
    1,
  );
  t.equal(moved(delivered, 'extension_api_webhook_delivery_lag_seconds_count', { event_type: 'task.created' }), 1);
  const lag = sampleValue(delivered, 'extension_api_webhook_delivery_lag_seconds_sum', { event_type: 'task.created' });
  t.ok(lag > 0 && lag < 60, `the event's age when delivered (${lag} s)`);
  t.equal(moved(delivered, 'extension_api_webhook_deliveries_waiting', { state: 'due' }), 0, 'nothing due any more');
  t.equal(moved(delivered, 'extension_api_webhook_deliveries_waiting', { state: 'held' }), 1, 'still held');
  t.notOk(
    text.includes(agencyId) || text.includes(receiver.url) || text.includes(sent.id),
    'no agency, receiver or subscription',
  );
});

t.test(
  'a referral filed through the partition reaches a receiver subscribed with the CLI, signed both ways',
  async (t) => {
    const receiver = await startReceiver(t);
    const { secret, id } = await subscribe(receiver, 'referral.created,referral.declined,intake.status_changed');
    startWebhookWorker(t, db);
    const accepted = await fileReferral(phi, '02108');
    const declined = await fileReferral(phi, '99950');
    t.equal(accepted.statusCode, 200, accepted.body);
    t.equal(declined.json().data.disposition, 'declined');
    const deliveries = await receiver.waitFor(5);
    await until('every delivery is settled', async () => {
      const open = await db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('subscription_id', '=', id)
        .where('status', '!=', 'delivered')
        .execute();
      const unfanned = await db
        .selectFrom('webhook_events')
        .select('id')
        .where('agency_id', '=', agencyId)
        .where('fanned_out_at', 'is', null)
        .execute();
      return open.length === 0 && unfanned.length === 0;
    });
    t.equal(receiver.received.length, 5, 'two referral.created, one referral.declined, two intake.status_changed');
    const envelopes = deliveries.map((delivery) => verified(t, delivery, secret));
    const byType = (type: string) => envelopes.filter((e) => e.type === type);
    t.same(
      byType('referral.created')
        .map((e) => e.data.id)
        .sort(),
      [accepted.json().data.referral_id, declined.json().data.referral_id].sort(),
    );
    t.match(byType('referral.declined'), [
      {
        agency_id: agencyId,
        envelope_version: '2026-06-27',
        contract_version: '2',
        data: { id: declined.json().data.referral_id, disposition: 'declined', decline_reason: 'out_of_area' },
      },
    ]);
    t.match(
      byType('intake.status_changed')
        .map((e) => e.data)
        .sort((a, b) => String(a.previous_status).localeCompare(String(b.previous_status))),
      [{ previous_status: null }, { previous_status: null }],
    );
    const statuses = byType('intake.status_changed')
      .map((e) => (e.data.intake as { status: string }).status)
      .sort();
    t.same(statuses, ['declined', 'pending_review'], 'the intakes as listIntakes lists them');
    const referral = await phi.request({
      method: 'GET',
      url: `/api/v1/ext/referrals/${accepted.json().data.referral_id}`,
    });
    t.equal(
      byType('referral.created').find((e) => e.data.id === accepted.json().data.referral_id)!.data.patient_id,
      referral.json().data.patient_id,
      'the real chart id in a phi subscription',
    );
    t.equal(new Set(deliveries.map((d) => d.headers['x-svc-delivery-id'])).size, 5, 'one delivery id per event');
    t.equal(new Set(envelopes.map((e) => e.id)).size, 5);
    // The receiver has answered the fifth before its outcome is written: wait for the worker to record all five.
    const delivered = async () =>
      (await admin(webhookCommands.deliveries, { id, status: 'delivered' })).deliveries as Array<{
        id: string;
        attempts: number;
      }>;
    await until('the five outcomes are recorded', async () => (await delivered()).length >= 5);
    const listed = await delivered();
    t.equal(listed.length, 5, 'webhook deliveries lists them delivered');
    t.ok(listed.every((d) => d.attempts === 1));
  },
);

t.test('a receiver that fails three times, then succeeds, gets the same delivery id and event each time', async (t) => {
  const receiver = await startReceiver(t, (_id, nth) => (nth <= 3 ? 503 : 200));
  const { secret, id } = await subscribe(receiver, 'task.created');
  startWebhookWorker(t, db);
  const task = await createTask('Call the hospital back');
  const requests = await receiver.waitFor(4);
  t.same(
    requests.map((r) => r.status),
    [503, 503, 503, 200],
  );
  t.equal(new Set(requests.map((r) => r.headers['x-svc-delivery-id'])).size, 1, 'one delivery id');
  const envelopes = requests.map((r) => verified(t, r, secret));
  t.equal(new Set(envelopes.map((e) => e.id)).size, 1, 'one event id');
  t.match(envelopes[0], {
    type: 'task.created',
    data: { id: task.json().data.id, title: 'Call the hospital back', status: 'open' },
  });
  const delivery = await deliveryRow(String(requests[0].headers['x-svc-delivery-id']));
  await until('the success is recorded', async () => (await deliveryRow(delivery.id)).status === 'delivered');
  t.match(await deliveryRow(delivery.id), {
    subscription_id: id,
    status: 'delivered',
    attempts: 4,
    last_status_code: 200,
    last_error: null,
  });
  t.equal((await subscriptionRow(id)).failing_since, null, 'a success ends the failing streak');
});

t.test('a no_phi subscription gets the surrogate handles and reductions a no_phi session gets', async (t) => {
  const receiver = await startReceiver(t);
  const { secret } = await subscribe(receiver, 'referral.created', { 'phi-mode': 'no_phi' });
  startWebhookWorker(t, db);
  const filed = await fileReferral(phi, '02108');
  const [delivery] = await receiver.waitFor(1);
  const { data } = verified(t, delivery, secret);
  const asNoPhiSession = (await noPhi.request({ method: 'GET', url: '/api/v1/ext/referrals', query: { limit: '200' } }))
    .json()
    .data.find((r: { id: string }) => r.id === filed.json().data.referral_id);
  t.match(data.patient_id, /^PT-/, 'a handle, not the chart id');
  t.not(data.patient_id, filed.json().data.patient_id);
  t.same(data, asNoPhiSession, 'exactly what listReferrals shows a no_phi session');
  t.match(data.referral_date, /^\d{4}-01-01T00:00:00\.000Z$/, 'the year only');
});

t.test('clinical events are held until the BAA is recorded as signed, then released in order', async (t) => {
  const receiver = await startReceiver(t);
  const { id, secret } = await subscribe(receiver, 'task.created,task.updated', { 'baa-signed': false });
  startWebhookWorker(t, db, { concurrency: 1 });
  const first = await createTask('First');
  await phi.request({
    method: 'PATCH',
    url: `/api/v1/ext/tasks/${first.json().data.id}`,
    headers: { 'idempotency-key': key() },
    payload: { status: 'in_progress', priority: 'high' },
  });
  await createTask('Third');
  await until(
    'three deliveries are held',
    async () =>
      ((await admin(webhookCommands.deliveries, { id, status: 'held' })).deliveries as unknown[]).length === 3,
  );
  await sleep(200);
  t.equal(receiver.received.length, 0, 'nothing is sent while held');
  t.match(await refusal(webhookCommands.baa, { id }), /--signed is required/);
  const signed = await admin(webhookCommands.baa, { id, signed: true });
  t.match(signed, { note: /3 held deliveries released/, subscription: { baa_signed_at: /^\d{4}-/ } });
  const envelopes = (await receiver.waitFor(3)).map((r) => verified(t, r, secret));
  t.same(
    envelopes.map((e) => e.type),
    ['task.created', 'task.updated', 'task.created'],
    'in the order of the changes',
  );
  t.match(envelopes[1].data, {
    task: { id: first.json().data.id, status: 'in_progress', priority: 'high', version: 2 },
    previous_status: 'open',
  });
  t.same([...(envelopes[1].data.changed_fields as string[])].sort(), ['priority', 'status']);
});

t.test(
  'held deliveries released by the BAA reach the receiver one at a time, in event order, and the next event after them',
  async (t) => {
    let open = 0;
    let mostOpen = 0;
    // A receiver that takes a moment to answer: deliveries sent side by side would overlap here, and may overtake each other on the way.
    const receiver = await startReceiver(t, async () => {
      mostOpen = Math.max(mostOpen, ++open);
      await sleep(25);
      open--;
      return 204;
    });
    const { id, secret } = await subscribe(receiver, 'task.created', { 'baa-signed': false });
    startWebhookWorker(t, db);
    const titles = Array.from({ length: 8 }, (_, i) => `Held ${i + 1}`);
    for (const title of titles) await createTask(title);
    await until(
      'eight deliveries are held',
      async () =>
        ((await admin(webhookCommands.deliveries, { id, status: 'held' })).deliveries as unknown[]).length === 8,
    );
    t.match(await admin(webhookCommands.baa, { id, signed: true }), { note: /8 held deliveries released/ });
    await createTask('After the BAA');
    const envelopes = (await receiver.waitFor(9)).map((r) => verified(t, r, secret));
    t.same(
      envelopes.map((e) => e.data.title),
      [...titles, 'After the BAA'],
      'in event order',
    );
    t.equal(mostOpen, 1, 'each sent when the one before it was answered');
  },
);

t.test(
  'a rotated secret: during the overlap each delivery verifies with either secret; after it, only the new one',
  async (t) => {
    const receiver = await startReceiver(t);
    const { id, secret: old } = await subscribe(receiver, 'task.created');
    const rotated = await admin(webhookCommands['rotate-secret'], { id, 'overlap-hours': '1' });
    const fresh = rotated.signing_secret as string;
    t.not(fresh, old);
    t.ok(Date.parse(rotated.previous_secret_retires_at as string) > Date.now() + 3_500_000);
    startWebhookWorker(t, db);
    await createTask('After the rotation');
    const [during] = await receiver.waitFor(1);
    t.ok(during.headers['x-svc-signature-previous'], 'x-svc-signature-previous is sent');
    verified(t, during, old);
    verified(t, during, fresh);
    await admin(webhookCommands['rotate-secret'], {
      id,
      'overlap-hours': '0',
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    });
    await createTask('After the second rotation');
    const [, after] = await receiver.waitFor(2);
    t.equal(after.headers['x-svc-signature-previous'], undefined, 'no overlap: no previous signature');
    verified(t, after, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw');
    t.throws(() => verifyDelivery(after.rawBody, after.headers, [old, fresh]), {
      name: 'WebhookVerificationError',
      message: 'no signature matches a given secret',
    });
    const sealed = await db
      .selectFrom('webhook_secrets')
      .select(['id', 'secret_sealed'])
      .where('subscription_id', '=', id)
      .execute();
    t.equal(sealed.length, 3);
    for (const row of sealed) {
      t.notOk(
        [old, fresh].some((s) => row.secret_sealed.includes(s) || row.secret_sealed.includes(s.slice(6))),
        'no secret is stored in plaintext',
      );
      t.match(testKeyEncryption.open(row.secret_sealed, webhookSecretRow(row.id)).toString('utf8'), /^whsec_/);
    }
  },
);

t.test('an exhausted delivery is failed, listed, and replayed as the same delivery', async (t) => {
  let up = false;
  const receiver = await startReceiver(t, () => (up ? 200 : 500));
  const { id, secret } = await subscribe(receiver, 'task.created');
  startWebhookWorker(t, db, { retryDelaysMs: [10] });
  await createTask('Will fail twice');
  await receiver.waitFor(2);
  await until(
    'the delivery is failed',
    async () =>
      ((await admin(webhookCommands.deliveries, { id, status: 'failed' })).deliveries as unknown[]).length === 1,
  );
  const [failed] = (await admin(webhookCommands.deliveries, { id, status: 'failed' })).deliveries as Array<{
    id: string;
    attempts: number;
    last_status_code: number;
    last_error: string;
  }>;
  t.match(failed, { attempts: 2, last_status_code: 500, last_error: 'receiver answered 500' });
  t.not((await subscriptionRow(id)).failing_since, null, 'the subscription is failing');
  up = true;
  t.match(await admin(webhookCommands.replay, { 'delivery-id': failed.id }), {
    delivery_id: failed.id,
    status: 'pending',
  });
  const [, , replayed] = await receiver.waitFor(3);
  t.equal(replayed.headers['x-svc-delivery-id'], failed.id, 'the same delivery id');
  verified(t, replayed, secret);
  await until('the replay is recorded', async () => (await deliveryRow(failed.id)).status === 'delivered');
  t.equal(await refusal(webhookCommands.replay, { 'delivery-id': 'whd_nothing' }), 'no delivery "whd_nothing"');
});

t.test('410 Gone disables the subscription; so does failing for five days', async (t) => {
  const gone = await startReceiver(t, () => 410);
  const first = await subscribe(gone, 'task.created');
  const failing = await startReceiver(t, () => 500);
  const second = await subscribe(failing, 'task.created');
  await db
    .updateTable('webhook_subscriptions')
    .set({ failing_since: new Date(Date.now() - 5 * 86_400_000 - 60_000) })
    .where('id', '=', second.id)
    .execute();
  startWebhookWorker(t, db);
  await createTask('Nobody listens');
  await until(
    'both are disabled',
    async () =>
      (await subscriptionRow(first.id)).status === 'disabled' &&
      (await subscriptionRow(second.id)).status === 'disabled',
  );
  t.match(await subscriptionRow(first.id), { disabled_reason: 'the receiver answered 410 Gone' });
  t.match(await subscriptionRow(second.id), { disabled_reason: /^failing since \d{4}-/ });
  t.equal(gone.received.length, 1, 'no retry after 410');
  const deliveriesOf = async () =>
    (
      await db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('subscription_id', 'in', [first.id, second.id])
        .execute()
    ).length;
  const before = await deliveriesOf();
  await createTask('Sent to nobody');
  await until(
    'the event is fanned out',
    async () =>
      (
        await db
          .selectFrom('webhook_events')
          .select('id')
          .where('agency_id', '=', agencyId)
          .where('fanned_out_at', 'is', null)
          .execute()
      ).length === 0,
  );
  t.equal(await deliveriesOf(), before, 'a disabled subscription gets nothing');
  t.match(await admin(webhookCommands.enable, { id: first.id }), {
    subscription: { status: 'enabled', disabled_reason: null },
  });
  t.match(await admin(webhookCommands.disable, { id: first.id }), {
    subscription: { status: 'disabled', disabled_reason: 'disabled by an administrator' },
  });
});

t.test('a redirect is not followed', async (t) => {
  const target = await startReceiver(t);
  const redirecting = await startReceiver(t, (_id, _nth, reply) => {
    reply.setHeader('location', target.url);
    return 307;
  });
  const { id } = await subscribe(redirecting, 'task.created');
  startWebhookWorker(t, db, { retryDelaysMs: [] });
  await createTask('Redirected');
  await until(
    'the delivery is failed',
    async () =>
      ((await admin(webhookCommands.deliveries, { id, status: 'failed' })).deliveries as unknown[]).length === 1,
  );
  const [delivery] = (await admin(webhookCommands.deliveries, { id })).deliveries as Array<{ last_error: string }>;
  t.match(delivery.last_error, /^redirect not followed \(307 to http:\/\/127\.0\.0\.1:\d+\/hooks\)$/);
  t.equal(target.received.length, 0);
});

t.test('a receiver that does not answer in time is a failed attempt; an answer is read up to 64 KiB', async (t) => {
  const server = createServer((request) => request.resume());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const silent = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks` } as TestReceiver;
  const { id } = await subscribe(silent, 'task.created');
  const hasty = startWebhookWorker(t, db, { retryDelaysMs: [], timeoutMs: 300 });
  await createTask('Nobody answers');
  await until(
    'the delivery is failed',
    async () =>
      ((await admin(webhookCommands.deliveries, { id, status: 'failed' })).deliveries as unknown[]).length === 1,
  );
  t.match(
    ((await admin(webhookCommands.deliveries, { id })).deliveries as Array<{ last_error: string }>)[0].last_error,
    'no answer within 0.3 s',
  );
  // Stopped, so that the long answer below is attempted only under the 10 s time-out (on a loaded machine 0.3 s can
  // pass before 64 KiB are read).
  await hasty.stop();

  // A 200 whose body never ends: the attempt reads 64 KiB of it and is done, well before the time-out.
  const endless = createServer((request, reply) => {
    request.resume();
    reply.writeHead(200);
    const chunk = Buffer.alloc(16_384, 'x');
    const pump = () => {
      while (reply.write(chunk));
    };
    reply.on('drain', pump);
    pump();
  });
  await new Promise<void>((resolve) => endless.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    endless.closeAllConnections();
    endless.close();
  });
  const talkative = await subscribe(
    { url: `http://127.0.0.1:${(endless.address() as AddressInfo).port}/hooks` } as TestReceiver,
    'task.created',
  );
  startWebhookWorker(t, db, { retryDelaysMs: [], timeoutMs: 10_000 });
  const started = Date.now();
  await createTask('Long answer');
  await until(
    'the delivery is delivered',
    async () =>
      ((await admin(webhookCommands.deliveries, { id: talkative.id, status: 'delivered' })).deliveries as unknown[])
        .length === 1,
  );
  t.ok(Date.now() - started < 9_000, 'without waiting for the end of the answer');
});

t.test('events exist exactly when their change committed', async (t) => {
  const before = await eventCount();
  const replayKey = key();
  const body = referralBody('02108');
  const first = await fileReferral(phi, '02108', replayKey, body);
  const again = await fileReferral(phi, '02108', replayKey, body);
  t.equal(again.headers['idempotent-replayed'], 'true');
  t.equal(again.json().data.referral_id, first.json().data.referral_id);
  t.equal(await eventCount(), before + 2, 'the replay adds no event (referral.created and intake.status_changed once)');
  const refused = await phi.request({
    method: 'POST',
    url: '/api/v1/ext/tasks',
    headers: { 'idempotency-key': key() },
    payload: { title: 'x', assignee_id: 'nobody-here' },
  });
  t.equal(refused.statusCode, 400);
  const unknownChart = await phi.request({
    method: 'POST',
    url: '/api/v1/ext/referrals',
    headers: { 'idempotency-key': key() },
    payload: { service_line: 'home_health', patient_id: 'pat_unknown' },
  });
  t.equal(unknownChart.statusCode, 400, 'refused inside the transaction, after the pipeline started');
  t.equal(await eventCount(), before + 2, 'a refused command adds none');
  const events = await db
    .selectFrom('webhook_events')
    .select(['type', 'data'])
    .where('agency_id', '=', agencyId)
    .orderBy('seq', 'desc')
    .limit(2)
    .execute();
  t.same(events.map((e) => e.type).sort(), ['intake.status_changed', 'referral.created']);
});

t.test('webhook subscribe refuses what it cannot deliver to', async (t) => {
  const base = { agency: agencyId, events: 'task.created' };
  t.match(
    await refusal(webhookCommands.subscribe, { ...base, url: 'https://10.0.0.1/hook' }),
    /^receiver refused: 10\.0\.0\.1 is in 10\.0\.0\.0\/8 \(Private-Use/,
  );
  t.match(
    await refusal(webhookCommands.subscribe, { ...base, url: 'https://[::ffff:0:7f00:1]/' }),
    /^receiver refused: ::ffff:0:7f00:1 is in ::ffff:0:0:0\/96 \(IPv4-translated/,
  );
  t.match(await refusal(webhookCommands.subscribe, { ...base, url: 'http://127.0.0.1:9/hook' }), /must be https/);
  t.match(await refusal(webhookCommands.subscribe, { ...base, url: 'https://[::1]/hook' }), /loopback/);
  t.match(
    await refusal(webhookCommands.subscribe, { ...base, url: 'https://127.0.0.1/hook', events: 'task.deleted' }),
    /^unknown event types: task\.deleted/,
  );
  t.match(
    await refusal(webhookCommands.subscribe, {
      ...base,
      url: 'http://127.0.0.1:9/hook',
      'allow-http-loopback': true,
      secret: 'hunter2',
    }),
    /whsec_/,
  );
  t.match(
    await refusal(webhookCommands.subscribe, {
      ...base,
      url: 'http://127.0.0.1:9/hook',
      'allow-http-loopback': true,
      'phi-mode': 'some',
    }),
    /--phi-mode/,
  );
  t.equal(
    await refusal(webhookCommands.subscribe, {
      ...base,
      agency: 'no-such-agency',
      url: 'http://127.0.0.1:9/hook',
      'allow-http-loopback': true,
    }),
    'no agency "no-such-agency"',
  );
  const listed = (await admin(webhookCommands.list, { agency: agencyId })).subscriptions as Array<{
    id: string;
    url: string;
  }>;
  t.ok(listed.length >= 10);
  t.ok(
    listed.every((s) => s.url.startsWith('http://127.0.0.1:')),
    'nothing refused was stored',
  );
});
