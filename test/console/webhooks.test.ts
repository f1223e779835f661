/**
 * The console's webhook subscriptions as people use them: an administrator in Debian's headless Chromium subscribes a
 * loopback receiver, sees a refused receiver explained, records the BAA and sees the held delivery arrive, replays a
 * failed one; over HTTP, readers may look but not change, another agency sees nothing, and changes name the person.
 */
import { t } from 'tap';
import { verifyDelivery } from '../../src/events/verify-delivery.js';
import { signIn } from '../helpers/app.js';
import { openHeadlessChromium, type HeadlessPage } from '../helpers/chromium.js';
import {
  accessibilityViolations,
  consoleTestbed,
  httpSession,
  inBrowser,
  keyboardWalk,
  pageText,
  press,
  shot,
  signInAs,
  typeInto,
} from '../helpers/console.js';
import { startReceiver, startWebhookWorker } from '../helpers/webhook-receiver.js';
import { until } from '../helpers/until.js';
import { subscribeWebhook, webhookCommands } from '../../src/admin/webhook.js';
import { webhookEvents } from '../../src/generated/contract.js';
import { testKeyEncryption } from '../helpers/secrets.js';

t.setTimeout(240_000);
const { server, db, agency, other: otherAgency } = await consoleTestbed(t);
const partition = await signIn(server, { phiMode: 'phi', integration: { agencyId: agency.agencyId } });
let receiverStatus = 204;
const receiver = await startReceiver(t, () => receiverStatus);
startWebhookWorker(t, db);

const createTask = (title: string) =>
  partition.request({
    method: 'POST',
    url: '/api/v1/ext/tasks',
    headers: { 'idempotency-key': `console-wh-${Math.random().toString(36).slice(2, 12)}` },
    payload: { title },
  });
const subscriptionRow = (id: string) =>
  db.selectFrom('webhook_subscriptions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const deliveriesOf = (id: string) =>
  db.selectFrom('webhook_deliveries').selectAll().where('subscription_id', '=', id).orderBy('event_seq').execute();
const auditOf = (operation: string, subscriptionId: string) =>
  db
    .selectFrom('audit_events')
    .select(['details', 'resource_ids'])
    .where('operation_id', '=', operation)
    .execute()
    .then((rows) => rows.filter((row) => (row.resource_ids as string[]).includes(subscriptionId)));

/**
 * A failed delivery to the subscription, of an event written already fanned out (so that the worker, which would make
 * the same delivery, leaves it alone).
 */
async function failedDelivery(subscriptionId: string, id: string, createdAt: Date): Promise<void> {
  const [{ agency_id }] = await db
    .selectFrom('webhook_subscriptions')
    .select('agency_id')
    .where('id', '=', subscriptionId)
    .execute();
  const eventId = `evt_${id}`;
  await db
    .insertInto('webhook_events')
    .values({ agency_id, id: eventId, type: 'remittance.received', data: '{}', fanned_out_at: new Date() })
    .execute();
  const { seq } = await db
    .selectFrom('webhook_events')
    .select('seq')
    .where('id', '=', eventId)
    .executeTakeFirstOrThrow();
  await db
    .insertInto('webhook_deliveries')
    .values({
      agency_id,
      id,
      subscription_id: subscriptionId,
      event_id: eventId,
      event_seq: seq,
      status: 'failed',
      created_at: createdAt,
    })
    .execute();
}

/** A subscription made the CLI's way, to probe the pages of people who may not make one. */
const cliSubscription = (agencyId: string) =>
  subscribeWebhook(db, testKeyEncryption, {
    agencyId,
    url: receiver.url,
    eventTypes: ['remittance.received'],
    phiMode: 'no_phi',
    baaSigned: false,
    allowHttpLoopback: true,
  });

async function check(page: HeadlessPage, name: string): Promise<void> {
  const found = await page.evaluate<boolean>(`(() => {
    const box = document.querySelector('input[type=checkbox][name=${JSON.stringify(name.split('=')[0])}][value=${JSON.stringify(name.split('=')[1])}]');
    if (!box) return false;
    box.checked = true;
    return true;
  })()`);
  if (!found) throw new Error(`no checkbox ${name}`);
}

const fieldValue = (page: HeadlessPage, selector: string) =>
  page.evaluate<string | boolean>(
    `(() => { const e = document.querySelector(${JSON.stringify(selector)}); return e.type === 'checkbox' ? e.checked : e.value; })()`,
  );

t.test(
  'in a browser, an administrator subscribes a loopback receiver, records the BAA, sees deliveries and replays one',
  inBrowser,
  async (t) => {
    const page = await openHeadlessChromium(t);
    await signInAs(page, server.base, agency.administrator);
    await page.navigate(`${server.base}/console/webhooks`);
    t.match(await pageText(page), /This agency has no webhook subscription/);
    t.same(await accessibilityViolations(page), [], 'webhooks: no serious or critical axe violation');
    const walk = await keyboardWalk(page);
    t.same(walk.reached, walk.inPageOrder, 'Tab reaches every field of the form, in page order');
    await shot(page, 'webhooks-empty');

    await typeInto(page, 'Receiver URL', 'https://10.0.0.1/hooks');
    await check(page, 'events=task.created');
    await press(page, 'Subscribe');
    t.match(
      await pageText(page),
      /receiver refused: 10\.0\.0\.1 is in 10\.0\.0\.0\/8 \(Private-Use, RFC 1918\), which may not receive webhooks/,
    );
    t.equal(await fieldValue(page, '#url'), 'https://10.0.0.1/hooks', 'the form is kept filled');
    t.equal(await fieldValue(page, 'input[value="task.created"]'), true);
    t.same(await accessibilityViolations(page), [], 'refused: no serious or critical axe violation');
    await shot(page, 'webhooks-refused');

    await typeInto(page, 'Receiver URL', receiver.url);
    await press(page, 'Subscribe');
    t.match(
      await pageText(page),
      /receiver refused: plain http:\/\/ only to a loopback address|receivers must be https/,
    );
    await check(page, 'allow_http_loopback=yes');
    await press(page, 'Subscribe');
    t.match(await pageText(page), /Subscription created/);
    const secret = await page.evaluate<string>(`document.querySelector('.secret').textContent`);
    t.match(secret, /^whsec_/, 'the signing secret is shown once');
    t.same(await accessibilityViolations(page), [], 'secret: no serious or critical axe violation');
    await shot(page, 'webhooks-created');
    const id = await page.evaluate<string>(
      `document.querySelector('main a[href^="/console/webhooks/"]').pathname.split('/').pop()`,
    );
    t.match(await subscriptionRow(id), { agency_id: agency.agencyId, baa_signed_at: null, allow_http_loopback: true });
    t.match(await auditOf('createWebhookSubscription', id), [
      { details: { actor: `user:${agency.administrator.userId}` } },
    ]);

    t.equal((await createTask('Held for the BAA')).statusCode, 200);
    await until('the clinical event is held', async () => (await deliveriesOf(id)).some((d) => d.status === 'held'));
    await page.navigate(`${server.base}/console/webhooks/${id}`);
    t.match(await pageText(page), /not recorded: clinical events are held/);
    t.same(await accessibilityViolations(page), [], 'subscription: no serious or critical axe violation');
    await shot(page, 'webhook-subscription');
    t.equal(receiver.received.length, 0, 'nothing is sent before the BAA is recorded');
    await press(page, 'Record the BAA as signed');
    t.match(await pageText(page), /The business associate agreement is recorded as signed/);
    await until('the held delivery arrives', async () => receiver.received.length === 1);
    const envelope = verifyDelivery(receiver.received[0].rawBody, receiver.received[0].headers, secret);
    t.equal(envelope.type, 'task.created', 'signed with the secret the page showed');
    t.match(await auditOf('recordWebhookBaaSigned', id), [
      { details: { actor: `user:${agency.administrator.userId}` } },
    ]);

    await until('the delivery is recorded delivered', async () => (await deliveriesOf(id))[0].status === 'delivered');
    await page.navigate(`${server.base}/console/webhooks/${id}/deliveries`);
    t.match(
      await pageText(page),
      /task\.created\s+\S+ \S+ UTC\s+delivered\s+1\s+\S+ \S+ UTC: HTTP 204, \d+ ms/,
      'its attempt',
    );
    t.same(await accessibilityViolations(page), [], 'deliveries: no serious or critical axe violation');
    await shot(page, 'webhook-deliveries');

    receiverStatus = 500;
    await createTask('Refused by the receiver');
    await until('the delivery fails for good', async () => (await deliveriesOf(id))[1]?.status === 'failed');
    await page.navigate(`${server.base}/console/webhooks/${id}/deliveries?status=failed`);
    t.match(await pageText(page), /failed\s+6\s+/);
    t.equal(
      (await pageText(page)).match(/\S+ \S+ UTC: HTTP 500, \d+ ms/g)?.length,
      6,
      'each attempt: time, status, latency',
    );
    await shot(page, 'webhook-deliveries-failed');
    receiverStatus = 204;
    const arrived = receiver.received.length;
    await press(page, 'Replay');
    t.match(await pageText(page), /The delivery is due again now/);
    await until('the replayed delivery arrives', async () => receiver.received.length === arrived + 1);
    const [, replayed] = await deliveriesOf(id);
    t.equal(receiver.received.at(-1)!.headers['x-svc-delivery-id'], replayed.id, 'the same delivery id');
    await until('the replay is recorded delivered', async () => (await deliveriesOf(id))[1].status === 'delivered');
    await page.navigate(`${server.base}/console/webhooks/${id}/deliveries?status=delivered`);
    t.equal((await pageText(page)).match(/UTC: HTTP 204, \d+ ms/g)?.length, 2, 'both delivered');
    t.match(await auditOf('replayWebhookDelivery', id), [
      { details: { actor: `user:${agency.administrator.userId}` } },
    ]);
    await page.navigate(`${server.base}/console/webhooks`);
    t.match(await pageText(page), /Delivery success per subscription/);
    await shot(page, 'webhooks-list');
  },
);

t.test(
  'an administrator over HTTP: rotate, replay every failed delivery since a time, disable and enable',
  async (t) => {
    const admin = await httpSession(server, agency.administrator);
    const created = await admin.post(
      '/console/webhooks',
      { url: receiver.url, events: ['remittance.received', 'approval.decided'], allow_http_loopback: 'yes' },
      '/console/webhooks',
    );
    t.equal(created.statusCode, 200, 'the answer is the page with the secret, not a redirect');
    t.equal(created.headers['cache-control'], 'no-store');
    t.match(created.body, /class="secret" aria-label="Signing secret">whsec_/);
    const badMode = await admin.post(
      '/console/webhooks',
      { url: receiver.url, events: 'remittance.received', phi_mode: 'some', allow_http_loopback: 'yes' },
      '/console/webhooks',
    );
    t.equal(badMode.statusCode, 400);
    t.match(badMode.body, /role="alert">the PHI mode must be no_phi or phi, got &#34;some&#34;/);
    const { id } = await cliSubscription(agency.agencyId);
    const page = `/console/webhooks/${id}`;
    const rotated = await admin.post(`${page}/rotate-secret`, { overlap_hours: '2' }, page);
    t.equal(rotated.statusCode, 200);
    t.equal(rotated.headers['cache-control'], 'no-store');
    t.match(rotated.body, /class="secret" aria-label="Signing secret">whsec_/);
    const refused = await admin.post(`${page}/rotate-secret`, { overlap_hours: '900' }, page);
    t.equal(refused.statusCode, 400);
    t.match(refused.body, /role="alert">the overlap must be at most 720 hours/);

    const older = new Date(Date.now() - 7_200_000);
    for (let i = 0; i < 26; i++) await failedDelivery(id, `whd_console_older_${i}`, older);
    const first = await admin.get(`${page}/deliveries?status=failed`);
    t.equal(first.body.match(/<tr><td><code>/g)?.length, 25, 'a page holds 25 deliveries');
    const nextPage = /<a href="([^"]+)">Older deliveries<\/a>/.exec(first.body)?.[1].replaceAll('&#38;', '&');
    t.match(nextPage, /status=failed&before=\d+/, 'the next page keeps the filter');
    const second = await admin.get(nextPage!);
    t.equal(second.body.match(/<tr><td><code>/g)?.length, 1, 'and the next page the rest');
    t.match(second.body, /whd_console_older_0/);

    const failedAt = new Date(Date.now() - 60_000);
    await failedDelivery(id, 'whd_console_failed', failedAt);
    const since = failedAt.toISOString().slice(0, 16);
    const replayed = await admin.post(`${page}/replay-failed`, { since }, page);
    t.equal(replayed.statusCode, 303);
    t.match(
      (await admin.get(replayed.headers.location as string)).body,
      /The failed deliveries since that time are due/,
    );
    t.match(
      (await deliveriesOf(id)).find((d) => d.id === 'whd_console_failed'),
      { status: /pending|delivered/ },
    );
    t.match(await auditOf('replayFailedWebhookDeliveries', id), [
      { details: { actor: `user:${agency.administrator.userId}`, replayed: 1 } },
    ]);
    const none = await admin.post(`${page}/replay-failed`, { since: new Date().toISOString().slice(0, 16) }, page);
    t.match((await admin.get(none.headers.location as string)).body, /No delivery has failed since that time/);
    t.match(
      (await admin.post(`${page}/replay-failed`, { since: 'yesterday' }, page)).body,
      /&#34;yesterday&#34; is not a date and time/,
    );

    t.equal((await admin.post(`${page}/disable`, {}, page)).statusCode, 303);
    t.match(await subscriptionRow(id), { status: 'disabled', disabled_reason: 'disabled by an administrator' });
    t.equal((await admin.post(`${page}/enable`, {}, page)).statusCode, 303);
    t.match(await subscriptionRow(id), { status: 'enabled' });
    t.match(await auditOf('disableWebhookSubscription', id), [
      { details: { actor: `user:${agency.administrator.userId}` } },
    ]);
    await admin.post(`${page}/disable`, {}, page);
  },
);

t.test('staff and managers read the pages, see no form, and every post is 403 changing nothing', async (t) => {
  const { id } = await cliSubscription(agency.agencyId);
  const before = await subscriptionRow(id);
  const subscriptionCount = async () =>
    (await db.selectFrom('webhook_subscriptions').select('id').where('agency_id', '=', agency.agencyId).execute())
      .length;
  const subscriptionsBefore = await subscriptionCount();
  for (const person of [agency.staff, agency.manager]) {
    const session = await httpSession(server, person);
    for (const path of ['/console/webhooks', `/console/webhooks/${id}`, `/console/webhooks/${id}/deliveries`]) {
      const res = await session.get(path);
      t.equal(res.statusCode, 200, `${person.role} reads ${path}`);
      t.notMatch(res.body, /<form method="post" action="\/console\/webhooks/, `${person.role}: no form on ${path}`);
    }
    for (const action of ['baa', 'disable', 'rotate-secret', 'replay-failed', 'test']) {
      const res = await session.post(`/console/webhooks/${id}/${action}`, {
        overlap_hours: '1',
        since: '2026-01-01T00:00',
      });
      t.equal(res.statusCode, 403, `${person.role} may not ${action}`);
    }
    const created = await session.post('/console/webhooks', {
      url: receiver.url,
      events: 'task.created',
      allow_http_loopback: 'yes',
    });
    t.equal(created.statusCode, 403);
  }
  t.same(await subscriptionRow(id), before, 'the subscription is unchanged');
  t.same(await deliveriesOf(id), [], 'no test event was queued');
  t.equal(await subscriptionCount(), subscriptionsBefore, 'and none was created');
  const admin = await httpSession(server, agency.administrator);
  const unsigned = await server.app.inject({
    method: 'POST',
    url: `/console/webhooks/${id}/baa`,
    headers: { cookie: admin.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: '',
  });
  t.equal(unsigned.statusCode, 403, 'a post without the form token is refused');
  t.same(await subscriptionRow(id), before, 'and changes nothing');
});

t.test('a person of another agency gets 404 for the subscription and never sees it', async (t) => {
  const { id } = await cliSubscription(agency.agencyId);
  const before = await subscriptionRow(id);
  const stranger = await httpSession(server, otherAgency.administrator);
  t.notMatch((await stranger.get('/console/webhooks')).body, new RegExp(id));
  for (const path of [`/console/webhooks/${id}`, `/console/webhooks/${id}/deliveries`]) {
    const res = await stranger.get(path);
    t.equal(res.statusCode, 404, path);
    t.match(res.body, /There is no such webhook subscription in this agency/);
  }
  for (const action of ['baa', 'disable', 'rotate-secret', 'replay-failed', 'test']) {
    const res = await stranger.post(`/console/webhooks/${id}/${action}`, {
      overlap_hours: '1',
      since: '2026-01-01T00:00',
    });
    t.equal(res.statusCode, 404, `${action} of another agency's subscription`);
  }
  t.same(await subscriptionRow(id), before, 'nothing changed');
  t.same(await deliveriesOf(id), [], 'no test event was queued');
  t.same(await auditOf('recordWebhookBaaSigned', id), [], 'and nothing was recorded');
});

t.test('a test event goes to the tested subscription only, signed, never held, audited with the person', async (t) => {
  const tested = await startReceiver(t);
  const other = await startReceiver(t);
  const subscribe = (url: string) =>
    subscribeWebhook(db, testKeyEncryption, {
      agencyId: agency.agencyId,
      url,
      eventTypes: ['task.created'],
      phiMode: 'no_phi',
      baaSigned: false,
      allowHttpLoopback: true,
    });
  const [subscription, bystander] = [await subscribe(tested.url), await subscribe(other.url)];
  const admin = await httpSession(server, agency.administrator);
  const sent = await admin.post(
    `/console/webhooks/${subscription.id}/test`,
    {},
    `/console/webhooks/${subscription.id}`,
  );
  t.equal(sent.statusCode, 303);
  t.equal(sent.headers.location, `/console/webhooks/${subscription.id}/deliveries?done=test`);
  const [arrived] = await tested.waitFor(1);
  const envelope = verifyDelivery(arrived.rawBody, arrived.headers, subscription.secret);
  t.match(envelope, { type: 'webhook.test', agency_id: agency.agencyId, data: { subscription_id: subscription.id } });
  t.ok(webhookEvents['webhook.test'].validate(envelope), "the envelope is the contract's webhook.test");
  t.equal((await subscriptionRow(subscription.id)).baa_signed_at, null, 'sent with no BAA recorded: never held');
  t.same(await deliveriesOf(bystander.id), [], "the agency's other subscription got no delivery");
  t.match((await admin.get(`/console/webhooks/${subscription.id}/deliveries`)).body, /webhook\.test/);
  t.match(await auditOf('sendWebhookTest', subscription.id), [
    { details: { actor: `user:${agency.administrator.userId}` } },
  ]);

  const cli = await webhookCommands.test.run({ db, options: { id: subscription.id } } as never);
  t.match(cli.json, { type: 'webhook.test', status: 'pending' });
  await tested.waitFor(2);
  t.equal(other.received.length, 0, 'the other receiver heard nothing');
  await admin.post(`/console/webhooks/${subscription.id}/disable`, {}, `/console/webhooks/${subscription.id}`);
  const refused = await admin.post(
    `/console/webhooks/${subscription.id}/test`,
    {},
    `/console/webhooks/${subscription.id}`,
  );
  t.match(refused.body, /is disabled: enable it to send a test event/);
});

t.test(
  'a test event is the same in both PHI modes: a phi subscription without a BAA gets it, with the same data',
  async (t) => {
    const receivers = [await startReceiver(t), await startReceiver(t)];
    const [noPhi, phi] = await Promise.all(
      (['no_phi', 'phi'] as const).map((phiMode, i) =>
        subscribeWebhook(db, testKeyEncryption, {
          agencyId: agency.agencyId,
          url: receivers[i].url,
          eventTypes: ['task.created'],
          phiMode,
          baaSigned: false,
          allowHttpLoopback: true,
        }),
      ),
    );
    const envelopes = [];
    for (const [i, subscription] of [noPhi, phi].entries()) {
      await webhookCommands.test.run({ db, options: { id: subscription.id } } as never);
      const [arrived] = await receivers[i].waitFor(1);
      envelopes.push(verifyDelivery(arrived.rawBody, arrived.headers, subscription.secret));
    }
    const [fromNoPhi, fromPhi] = envelopes;
    t.ok(
      webhookEvents['webhook.test'].validate(fromPhi),
      "the phi subscription's envelope is the contract's webhook.test",
    );
    t.same(fromPhi.data, { ...fromNoPhi.data, subscription_id: phi.id }, 'the same data but the subscription tested');
  },
);

t.test('webhook.test cannot be subscribed to', async (t) => {
  await t.rejects(
    subscribeWebhook(db, testKeyEncryption, {
      agencyId: agency.agencyId,
      url: receiver.url,
      eventTypes: ['webhook.test'],
      phiMode: 'no_phi',
      baaSigned: false,
      allowHttpLoopback: true,
    }),
    { message: /unknown event types: webhook\.test/ },
  );
});
