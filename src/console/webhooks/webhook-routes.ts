import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  changeWebhookSubscription,
  sendWebhookTest,
  checkedPhiMode,
  DELIVERY_STATUSES,
  replayFailedWebhookDeliveries,
  replayWebhookDelivery,
  rotateWebhookSecret,
  subscribeWebhook,
  type WebhookSubscriptionChange,
} from '../../admin/webhook.js';
import { AdminError } from '../../admin/command.js';
import {
  attemptsOf,
  deliveryCounts,
  deliveryOf,
  listDeliveries,
  listSubscriptions,
  subscriptionOf,
  type DeliveryAttempt,
  type SubscriptionRow,
} from '../../events/subscriptions.js';
import type { PlatformActor } from '../../platform-commands/platform-command.js';
import {
  doneNotices,
  refusalOf,
  pageError,
  actorOf,
  formList,
  formText,
  needs,
  readStore,
  render,
  viewerOf,
  type ConsoleContext,
  type ConsoleSection,
} from '../console-context.js';
import { mayIn } from '../console-roles.js';
import { html, type Html } from '../html.js';
import type { Notice } from '../layout.js';
import {
  deliveriesPage,
  EMPTY_FORM,
  secretPage,
  subscribeForm,
  subscriptionPage,
  subscriptionsPage,
  WEBHOOKS_PATH,
  type StatusCounts,
  type SubscriptionForm,
} from './webhook-pages.js';

const DELIVERIES_PER_PAGE = 25;

const DONE = doneNotices({
  baa: 'The business associate agreement is recorded as signed; the held deliveries are released, oldest event first.',
  disable: 'The subscription is disabled: nothing is delivered until it is enabled; waiting deliveries wait.',
  enable: 'The subscription is enabled: waiting deliveries are attempted again.',
  replayed: 'The delivery is due again now, under the same delivery id.',
  'replayed-failed': 'The failed deliveries since that time are due again now, oldest event first.',
  'none-failed': 'No delivery has failed since that time: nothing was replayed.',
  test: 'A webhook.test delivery is queued for this receiver: it is below, with its attempts once it is sent.',
});

const notFound = () => pageError(404, 'There is no such webhook subscription in this agency.');

type SubscriptionRequest = FastifyRequest<{ Params: { id: string } }>;

const actorOfRequest = (request: FastifyRequest): PlatformActor => actorOf(viewerOf(request).person);
const mayAdminister = (request: FastifyRequest) => mayIn(viewerOf(request).person.role, 'administer');

/** The subscription of the path, when it is the viewer's agency's: another agency's id is a 404, before anything. */
async function ownSubscription(ctx: ConsoleContext, request: SubscriptionRequest): Promise<SubscriptionRow> {
  const row = await subscriptionOf(readStore(ctx, viewerOf(request).person), request.params.id);
  if (!row) throw notFound();
  return row;
}

async function countsBySubscription(ctx: ConsoleContext, request: FastifyRequest, subscriptionId?: string) {
  const counts = new Map<string, StatusCounts>();
  const store = readStore(ctx, viewerOf(request).person);
  for (const { subscription_id, status, count } of await deliveryCounts(store, subscriptionId)) {
    counts.set(subscription_id, { ...counts.get(subscription_id), [status]: Number(count) });
  }
  return counts;
}

async function showSubscriptions(
  ctx: ConsoleContext,
  request: FastifyRequest,
  reply: FastifyReply,
  form: SubscriptionForm,
  notice?: Notice,
) {
  const viewer = viewerOf(request);
  const rows = await listSubscriptions(readStore(ctx, viewer.person));
  const body = subscriptionsPage(
    rows,
    await countsBySubscription(ctx, request),
    mayAdminister(request) ? subscribeForm(viewer, form) : html``,
  );
  return render(request, reply, 'Webhooks', body, notice, notice?.kind === 'refused' ? 400 : 200);
}

async function showSubscription(
  ctx: ConsoleContext,
  request: SubscriptionRequest,
  reply: FastifyReply,
  row: SubscriptionRow,
  notice?: Notice,
) {
  const counts = (await countsBySubscription(ctx, request, row.id)).get(row.id) ?? {};
  const body = subscriptionPage(viewerOf(request), row, counts, mayAdminister(request));
  return render(request, reply, 'Webhook subscription', body, notice, notice?.kind === 'refused' ? 400 : 200);
}

function formOf(request: FastifyRequest): SubscriptionForm {
  return {
    url: formText(request, 'url').trim(),
    eventTypes: formList(request, 'events'),
    phiMode: formText(request, 'phi_mode') || EMPTY_FORM.phiMode,
    secret: formText(request, 'secret').trim(),
    baaSigned: formText(request, 'baa_signed') === 'yes',
    allowHttpLoopback: formText(request, 'allow_http_loopback') === 'yes',
  };
}

/** Runs a change; a refusal (AdminError) is the page again with its reason, never an error page. */
async function refusedOr<T>(change: () => Promise<T>): Promise<T | { refused: Notice }> {
  try {
    return await change();
  } catch (err) {
    return { refused: refusalOf(err) };
  }
}

const isRefusal = (outcome: unknown): outcome is { refused: Notice } =>
  typeof outcome === 'object' && outcome !== null && 'refused' in outcome;

/** A secret answer: rendered directly (no redirect: it is shown once), and never stored by a cache. */
function showSecret(
  request: FastifyRequest,
  reply: FastifyReply,
  title: string,
  secret: { id: string; secret: string },
  facts: Html,
) {
  reply.header('cache-control', 'no-store');
  return render(request, reply, title, secretPage(secret, secret.secret, facts));
}

function registerReads(scope: FastifyInstance, ctx: ConsoleContext) {
  scope.get('/webhooks', (request, reply) => showSubscriptions(ctx, request, reply, EMPTY_FORM, DONE.of(request)));
  scope.get('/webhooks/:id', async (request: SubscriptionRequest, reply) =>
    showSubscription(ctx, request, reply, await ownSubscription(ctx, request), DONE.of(request)),
  );
  scope.get('/webhooks/:id/deliveries', async (request: SubscriptionRequest, reply) => {
    const row = await ownSubscription(ctx, request);
    const query = request.query as Record<string, string | undefined>;
    const status = DELIVERY_STATUSES.find((s) => s === query.status);
    const before = /^\d+$/.test(query.before ?? '') ? Number(query.before) : undefined;
    const page = await listDeliveries(
      readStore(ctx, viewerOf(request).person),
      row,
      status,
      DELIVERIES_PER_PAGE + 1,
      before,
    );
    const shown = page.slice(0, DELIVERIES_PER_PAGE);
    const next =
      page.length > DELIVERIES_PER_PAGE
        ? `${WEBHOOKS_PATH}/${row.id}/deliveries?${new URLSearchParams({ ...(status ? { status } : {}), before: String(shown.at(-1)!.event_seq) })}`
        : undefined;
    const attempts = new Map<string, DeliveryAttempt[]>();
    for (const attempt of await attemptsOf(
      readStore(ctx, viewerOf(request).person),
      shown.map((d) => d.id),
    ))
      attempts.set(attempt.delivery_id, [...(attempts.get(attempt.delivery_id) ?? []), attempt]);
    const body = deliveriesPage(viewerOf(request), row, shown, attempts, status, next, mayAdminister(request));
    return render(request, reply, 'Webhook deliveries', body, DONE.of(request));
  });
}

function registerChanges(scope: FastifyInstance, ctx: ConsoleContext) {
  const administer = { preHandler: needs('administer') };
  scope.post('/webhooks', administer, async (request, reply) => {
    const form = formOf(request);
    const outcome = await refusedOr(() =>
      subscribeWebhook(
        ctx.db,
        ctx.keyEncryption,
        {
          ...form,
          agencyId: viewerOf(request).person.agencyId,
          phiMode: checkedPhiMode(form.phiMode, 'the PHI mode'),
          secret: form.secret || undefined,
        },
        actorOfRequest(request),
      ),
    );
    if (isRefusal(outcome)) return showSubscriptions(ctx, request, reply, form, outcome.refused);
    const held = form.baaSigned
      ? html``
      : html`<p>Clinical events are held until the business associate agreement is recorded on the subscription's page.</p>`;
    return showSecret(request, reply, 'Subscription created', outcome, held);
  });
  for (const change of ['baa', 'disable', 'enable'] as const satisfies readonly WebhookSubscriptionChange[]) {
    scope.post(`/webhooks/:id/${change}`, administer, async (request: SubscriptionRequest, reply) => {
      const row = await ownSubscription(ctx, request);
      const outcome = await refusedOr(() => changeWebhookSubscription(ctx.db, row, change, actorOfRequest(request)));
      if (isRefusal(outcome)) return showSubscription(ctx, request, reply, row, outcome.refused);
      return DONE.redirect(reply, `${WEBHOOKS_PATH}/${row.id}`, change);
    });
  }
  scope.post('/webhooks/:id/test', administer, async (request: SubscriptionRequest, reply) => {
    const row = await ownSubscription(ctx, request);
    const outcome = await refusedOr(() => sendWebhookTest(ctx.db, row, actorOfRequest(request)));
    if (isRefusal(outcome)) return showSubscription(ctx, request, reply, row, outcome.refused);
    return DONE.redirect(reply, `${WEBHOOKS_PATH}/${row.id}/deliveries`, 'test');
  });
  scope.post('/webhooks/:id/rotate-secret', administer, async (request: SubscriptionRequest, reply) => {
    const row = await ownSubscription(ctx, request);
    const hours = formText(request, 'overlap_hours');
    const outcome = await refusedOr(() => {
      if (!/^\d+$/.test(hours)) throw new AdminError(`the overlap must be a whole number of hours, got "${hours}"`);
      return rotateWebhookSecret(
        ctx.db,
        ctx.keyEncryption,
        row,
        { overlapHours: Number(hours) },
        actorOfRequest(request),
      );
    });
    if (isRefusal(outcome)) return showSubscription(ctx, request, reply, row, outcome.refused);
    const facts = html`<p>Until ${outcome.previousRetiresAt.toISOString()} each delivery is also signed with the previous secret (x-svc-signature-previous).</p>`;
    return showSecret(request, reply, 'Secret rotated', { id: row.id, secret: outcome.secret }, facts);
  });
  scope.post('/webhooks/:id/replay-failed', administer, async (request: SubscriptionRequest, reply) => {
    const row = await ownSubscription(ctx, request);
    const since = formText(request, 'since');
    const outcome = await refusedOr(() => {
      // datetime-local sends no zone: the field says UTC, and the server reads it so.
      const at = new Date(`${since}Z`);
      if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?$/.test(since) || Number.isNaN(at.getTime()))
        throw new AdminError(`"${since}" is not a date and time`);
      return replayFailedWebhookDeliveries(ctx.db, row, at, actorOfRequest(request));
    });
    if (isRefusal(outcome)) return showSubscription(ctx, request, reply, row, outcome.refused);
    const done = outcome === 0 ? 'none-failed' : 'replayed-failed';
    return DONE.redirect(reply, `${WEBHOOKS_PATH}/${row.id}/deliveries`, done);
  });
  scope.post(
    '/webhooks/:id/deliveries/:deliveryId/replay',
    administer,
    async (request: FastifyRequest<{ Params: { id: string; deliveryId: string } }>, reply) => {
      const row = await ownSubscription(ctx, request);
      const delivery = await deliveryOf(readStore(ctx, viewerOf(request).person), row, request.params.deliveryId);
      if (!delivery) throw notFound();
      const outcome = await refusedOr(() => replayWebhookDelivery(ctx.db, delivery, actorOfRequest(request)));
      if (isRefusal(outcome)) return showSubscription(ctx, request, reply, row, outcome.refused);
      return DONE.redirect(reply, `${WEBHOOKS_PATH}/${row.id}/deliveries`, 'replayed');
    },
  );
}

/** Webhook subscriptions of the agency: everyone reads them; administrators change them (as the admin CLI does). */
export const webhooksSection: ConsoleSection = {
  nav: { path: WEBHOOKS_PATH, label: 'Webhooks', capability: 'read' },
  register(scope, ctx) {
    registerReads(scope, ctx);
    registerChanges(scope, ctx);
  },
};
