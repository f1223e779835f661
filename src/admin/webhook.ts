import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { DeliveryStatus } from '../db/tables/webhooks.js';
import { PHI_MODES } from '../identity/grants.js';
import type { PhiMode } from '../shared/principal.js';
import { receiverAddress, receiverUrl, ReceiverRefused } from '../events/receiver-address.js';
import { newSigningSecret, signingSecretProblem } from '../events/signing.js';
import {
  createSubscription,
  findDelivery,
  findSubscription,
  listDeliveries,
  listSubscriptions,
  recordBaaSigned,
  replayDelivery,
  replayFailedSince,
  rotateSecret,
  queueTestDelivery,
  setEnabled,
  SUBSCRIBABLE_EVENT_TYPES,
  type SubscriptionRow,
} from '../events/subscriptions.js';
import {
  AdminError,
  describe,
  integerOption,
  listOption,
  requiredOption,
  stringOption,
  type Command,
  type Commands,
  type Options,
} from './command.js';
import { asOperator, asOperatorOn, noAgency, type OperatorCommand } from './operator-command.js';
import type { CommandStore } from '../db/tenant-store.js';
import type { KeyEncryption } from '../identity/key-encryption.js';
import type { PlatformActor } from '../platform-commands/platform-command.js';

const EVENT_TYPES = SUBSCRIBABLE_EVENT_TYPES;
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['held', 'pending', 'delivered', 'failed'];
export const DEFAULT_OVERLAP_HOURS = 24;
const DELIVERIES_SHOWN = 100;
const MAX_OVERLAP_HOURS = 24 * 30;

/** The event types asked for, each one the contract's, without repeats. */
function checkedEventTypes(types: string[]): string[] {
  if (types.length === 0) throw new AdminError(`choose at least one event type: ${EVENT_TYPES.join(', ')}`);
  const unknown = types.filter((type) => !EVENT_TYPES.includes(type));
  if (unknown.length > 0)
    throw new AdminError(`unknown event types: ${unknown.join(', ')} (known: ${EVENT_TYPES.join(', ')})`);
  return [...new Set(types)];
}

function eventTypes(options: Options): string[] {
  const types = listOption(options, 'events') ?? [];
  if (types.length === 0)
    throw new AdminError(`--events is required: a comma-separated list of ${EVENT_TYPES.join(', ')}`);
  return types;
}

/** The PHI mode asked for in `field` (the CLI's option, the console's field), when it is one. */
export function checkedPhiMode(mode: string, field: string): PhiMode {
  if (!(PHI_MODES as readonly string[]).includes(mode))
    throw new AdminError(`${field} must be ${PHI_MODES.join(' or ')}, got "${mode}"`);
  return mode as PhiMode;
}

/** The secret given (when it is a valid one), or a new one. */
function signingSecret(given: string | undefined): string {
  if (given === undefined) return newSigningSecret();
  const problem = signingSecretProblem(given);
  if (problem) throw new AdminError(problem);
  return given;
}

/** The receiver as the worker will see it: the URL's rules, then every address its host resolves to now. */
async function checkedReceiver(text: string, allowHttpLoopback: boolean): Promise<string> {
  try {
    const url = receiverUrl(text, allowHttpLoopback);
    await receiverAddress(url, allowHttpLoopback);
    return url.href;
  } catch (err) {
    if (err instanceof ReceiverRefused) throw new AdminError(`receiver refused: ${err.message}`);
    throw err;
  }
}

async function subscription(db: Kysely<DB>, options: Options): Promise<SubscriptionRow> {
  const id = requiredOption(options, 'id');
  const found = await findSubscription(db, id);
  if (!found) throw new AdminError(`no webhook subscription "${id}"`);
  return found;
}

/** What a webhook command does, on the audit record: to the agency's subscriptions, never with PHI. */
const ON_SUBSCRIPTIONS: Omit<OperatorCommand, 'operation'> = {
  resourceType: 'webhook_subscription',
  phiMode: 'no_phi',
};

/** Runs `run` as `actor`'s command `operation` on the subscription `row`, in its agency. */
function onSubscriptionRow<T>(
  db: Kysely<DB>,
  row: SubscriptionRow,
  operation: string,
  actor: PlatformActor,
  run: (store: CommandStore) => Promise<T>,
): Promise<T> {
  return asOperatorOn(db, row.agency_id, { ...ON_SUBSCRIPTIONS, operation, actor }, (store) => {
    store.auditReferences([row.id]);
    return run(store);
  });
}

function subscriptionView(row: SubscriptionRow) {
  return {
    id: row.id,
    agency_id: row.agency_id,
    url: row.url,
    events: row.event_types,
    phi_mode: row.phi_mode,
    baa_signed_at: row.baa_signed_at?.toISOString() ?? null,
    allow_http_loopback: row.allow_http_loopback,
    status: row.status,
    disabled_reason: row.disabled_reason,
    failing_since: row.failing_since?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  };
}

const ID = { id: { type: 'string' } } as const;

const REPLAY_REFUSALS = {
  held: (id: string) => `delivery ${id} is held until the business associate agreement is signed`,
  pending: (id: string) => `delivery ${id} is already waiting for its next attempt`,
};

/** A subscription as an administrator asks for it (the CLI's options, the console's form). */
export interface WebhookSubscriptionRequest {
  agencyId: string;
  url: string;
  eventTypes: string[];
  phiMode: PhiMode;
  /** Generated when not given. */
  secret?: string;
  baaSigned: boolean;
  /** Development only: plain http:// to a loopback receiver. */
  allowHttpLoopback: boolean;
}

export interface CreatedWebhookSubscription {
  id: string;
  /** Shown once: only its sealed form is stored. */
  secret: string;
  url: string;
  eventTypes: string[];
  phiMode: PhiMode;
}

/** Checks the request and the receiver (as every attempt will), then creates the subscription with its first secret. */
export async function subscribeWebhook(
  db: Kysely<DB>,
  keys: KeyEncryption,
  request: WebhookSubscriptionRequest,
  actor: PlatformActor = 'admin-cli',
): Promise<CreatedWebhookSubscription> {
  const eventTypes = checkedEventTypes(request.eventTypes);
  const secret = signingSecret(request.secret);
  const url = await checkedReceiver(request.url, request.allowHttpLoopback);
  const id = await asOperatorOn(
    db,
    request.agencyId,
    { ...ON_SUBSCRIPTIONS, operation: 'createWebhookSubscription', actor },
    async (store) => {
      const created = await createSubscription(store, keys, {
        url,
        eventTypes,
        phiMode: request.phiMode,
        secret,
        baaSigned: request.baaSigned,
        allowHttpLoopback: request.allowHttpLoopback,
      });
      store.auditReferences([created]);
      return created;
    },
    { unknownAgency: noAgency },
  );
  return { id, secret, url, eventTypes, phiMode: request.phiMode };
}

/** The changes to a subscription that need nothing but it: each one's operation, and what it reports it did. */
const SUBSCRIPTION_CHANGES = {
  disable: {
    operation: 'disableWebhookSubscription',
    async act(store: CommandStore, row: SubscriptionRow) {
      await setEnabled(store, row, false);
      return 'disabled: nothing is delivered until it is enabled; pending deliveries wait';
    },
  },
  enable: {
    operation: 'enableWebhookSubscription',
    async act(store: CommandStore, row: SubscriptionRow) {
      await setEnabled(store, row, true);
      return 'enabled: waiting deliveries are attempted again';
    },
  },
  baa: {
    operation: 'recordWebhookBaaSigned',
    async act(store: CommandStore, row: SubscriptionRow) {
      const released = await recordBaaSigned(store, row);
      return `business associate agreement recorded as signed; ${released} held deliveries released in event order`;
    },
  },
};

export type WebhookSubscriptionChange = keyof typeof SUBSCRIPTION_CHANGES;

/** Disables, enables, or records the BAA of (releasing the held deliveries) the subscription; returns what it did. */
export function changeWebhookSubscription(
  db: Kysely<DB>,
  row: SubscriptionRow,
  change: WebhookSubscriptionChange,
  actor: PlatformActor = 'admin-cli',
): Promise<string> {
  const { operation, act } = SUBSCRIPTION_CHANGES[change];
  return onSubscriptionRow(db, row, operation, actor, (store) => act(store, row));
}

/** A new current secret (given, or generated); the old one keeps signing for `overlapHours`. */
export async function rotateWebhookSecret(
  db: Kysely<DB>,
  keys: KeyEncryption,
  row: SubscriptionRow,
  request: { overlapHours: number; secret?: string },
  actor: PlatformActor = 'admin-cli',
): Promise<{ secret: string; previousRetiresAt: Date }> {
  if (request.overlapHours > MAX_OVERLAP_HOURS)
    throw new AdminError(`the overlap must be at most ${MAX_OVERLAP_HOURS} hours (30 days)`);
  const secret = signingSecret(request.secret);
  const previousRetiresAt = await onSubscriptionRow(db, row, 'rotateWebhookSecret', actor, (store) =>
    rotateSecret(store, keys, row, secret, request.overlapHours),
  );
  return { secret, previousRetiresAt };
}

/** The replay of one delivered or failed delivery: the same delivery, due now; a held or pending one is refused. */
export async function replayWebhookDelivery(
  db: Kysely<DB>,
  delivery: { agency_id: string; id: string; subscription_id: string; status: DeliveryStatus },
  actor: PlatformActor = 'admin-cli',
): Promise<void> {
  await asOperatorOn(
    db,
    delivery.agency_id,
    { ...ON_SUBSCRIPTIONS, operation: 'replayWebhookDelivery', actor },
    async (store) => {
      store.auditReferences([delivery.subscription_id]);
      store.auditDetails({ delivery_id: delivery.id });
      const replayed = await replayDelivery(store, delivery);
      if (replayed) throw new AdminError(REPLAY_REFUSALS[replayed.refused](delivery.id));
    },
  );
}

/** The replay of every failed delivery of the subscription made since `since`, each as replayWebhookDelivery replays one. */
export function replayFailedWebhookDeliveries(
  db: Kysely<DB>,
  row: SubscriptionRow,
  since: Date,
  actor: PlatformActor = 'admin-cli',
): Promise<number> {
  return onSubscriptionRow(db, row, 'replayFailedWebhookDeliveries', actor, async (store) => {
    const replayed = await replayFailedSince(store, row, since);
    store.auditDetails({ since: since.toISOString(), replayed });
    return replayed;
  });
}

/**
 * A webhook.test delivery to the subscription only, queued as every delivery is (sent by the delivery worker, retried,
 * replayable), whatever its event types and BAA; refused while the subscription is disabled. The delivery's id.
 */
export function sendWebhookTest(
  db: Kysely<DB>,
  row: SubscriptionRow,
  actor: PlatformActor = 'admin-cli',
): Promise<string> {
  if (row.status !== 'enabled')
    throw new AdminError(`subscription ${row.id} is disabled: enable it to send a test event`);
  return onSubscriptionRow(db, row, 'sendWebhookTest', actor, (store) => queueTestDelivery(store, row.id));
}

/** A command that changes one subscription named by --id and shows it after; `confirm` is a flag it requires. */
function onSubscription(
  usage: string,
  change: WebhookSubscriptionChange,
  confirm?: { flag: string; refusal: string },
): Command {
  return {
    usage,
    options: { ...ID, ...(confirm ? { [confirm.flag]: { type: 'boolean' } } : {}) },
    async run({ db, options }) {
      const row = await subscription(db, options);
      if (confirm && options[confirm.flag] !== true) throw new AdminError(confirm.refusal);
      const note = await changeWebhookSubscription(db, row, change);
      const view = subscriptionView((await findSubscription(db, row.id))!);
      return { json: { subscription: view, note }, text: `${note}\n${describe(view)}` };
    },
  };
}

export const webhookCommands: Commands = {
  subscribe: {
    usage: `webhook subscribe --agency ID --url URL --events ${EVENT_TYPES.join(',')} [--secret whsec_...] [--phi-mode no_phi|phi] (default no_phi) [--baa-signed] [--allow-http-loopback] (development)`,
    options: {
      agency: { type: 'string' },
      url: { type: 'string' },
      events: { type: 'string' },
      secret: { type: 'string' },
      'phi-mode': { type: 'string' },
      'baa-signed': { type: 'boolean' },
      'allow-http-loopback': { type: 'boolean' },
    },
    async run({ db, options, keyEncryption }) {
      const agencyId = requiredOption(options, 'agency');
      const request = {
        agencyId,
        eventTypes: eventTypes(options),
        phiMode: checkedPhiMode(stringOption(options, 'phi-mode') ?? 'no_phi', '--phi-mode'),
        secret: stringOption(options, 'secret'),
        baaSigned: options['baa-signed'] === true,
        allowHttpLoopback: options['allow-http-loopback'] === true,
      };
      const created = await subscribeWebhook(db, keyEncryption(), {
        ...request,
        url: requiredOption(options, 'url'),
      });
      const held = request.baaSigned
        ? ''
        : '\nClinical events are held until the business associate agreement is recorded: webhook baa --id ID --signed';
      const shown = {
        subscription_id: created.id,
        signing_secret: created.secret,
        url: created.url,
        events: created.eventTypes,
        phi_mode: created.phiMode,
      };
      return {
        json: { ...shown, baa_signed: request.baaSigned },
        text: `${describe(shown)}\nThe signing secret is shown once: store it with the receiver now.${held}`,
      };
    },
  },
  list: {
    usage: 'webhook list --agency ID',
    options: { agency: { type: 'string' } },
    async run(ctx) {
      const listed = await asOperator(
        ctx,
        { ...ON_SUBSCRIPTIONS, operation: 'listWebhookSubscriptions' },
        listSubscriptions,
      );
      const rows = listed.map(subscriptionView);
      return {
        json: { subscriptions: rows },
        text: rows.length === 0 ? 'no webhook subscriptions' : rows.map((row) => describe(row)).join('\n\n'),
      };
    },
  },
  'rotate-secret': {
    usage: `webhook rotate-secret --id ID [--overlap-hours N] (default ${DEFAULT_OVERLAP_HOURS}) [--secret whsec_...]`,
    options: { ...ID, 'overlap-hours': { type: 'string' }, secret: { type: 'string' } },
    async run({ db, options, keyEncryption }) {
      const overlapHours = integerOption(options, 'overlap-hours', 0) ?? DEFAULT_OVERLAP_HOURS;
      const rotated = await rotateWebhookSecret(db, keyEncryption(), await subscription(db, options), {
        overlapHours,
        secret: stringOption(options, 'secret'),
      });
      const fields = {
        subscription_id: requiredOption(options, 'id'),
        signing_secret: rotated.secret,
        previous_secret_retires_at: rotated.previousRetiresAt.toISOString(),
      };
      return {
        json: fields,
        text: `${describe(fields)}\nUntil then each delivery is signed with both (x-svc-signature-previous). The new secret is shown once.`,
      };
    },
  },
  disable: onSubscription('webhook disable --id ID', 'disable'),
  enable: onSubscription('webhook enable --id ID', 'enable'),
  baa: onSubscription('webhook baa --id ID --signed', 'baa', {
    flag: 'signed',
    refusal: '--signed is required: the agreement is recorded once it is signed',
  }),
  deliveries: {
    usage: `webhook deliveries --id ID [--status ${DELIVERY_STATUSES.join('|')}] (newest ${DELIVERIES_SHOWN} first)`,
    options: { ...ID, status: { type: 'string' } },
    async run({ db, options }) {
      const status = stringOption(options, 'status') as DeliveryStatus | undefined;
      if (status !== undefined && !DELIVERY_STATUSES.includes(status))
        throw new AdminError(`--status must be one of ${DELIVERY_STATUSES.join(', ')}`);
      const row = await subscription(db, options);
      const listed = await onSubscriptionRow(db, row, 'listWebhookDeliveries', 'admin-cli', (store) =>
        listDeliveries(store, row, status, DELIVERIES_SHOWN),
      );
      const rows = listed.map((row) => ({
        ...row,
        next_attempt_at: row.status === 'pending' ? row.next_attempt_at.toISOString() : null,
        last_attempt_at: row.last_attempt_at?.toISOString() ?? null,
        delivered_at: row.delivered_at?.toISOString() ?? null,
        created_at: row.created_at.toISOString(),
      }));
      const lines = rows.map((r) =>
        `${r.id}  ${r.type.padEnd(22)} ${r.status.padEnd(9)} attempts ${r.attempts}  ${r.last_status_code ?? '-'}  ${r.last_error ?? ''}`.trimEnd(),
      );
      return { json: { deliveries: rows }, text: rows.length === 0 ? 'no deliveries' : lines.join('\n') };
    },
  },
  test: {
    usage: 'webhook test --id ID   (a webhook.test delivery to this subscription only)',
    options: ID,
    async run({ db, options }) {
      const deliveryId = await sendWebhookTest(db, await subscription(db, options));
      return {
        json: { delivery_id: deliveryId, type: 'webhook.test', status: 'pending' },
        text: `webhook.test queued as delivery ${deliveryId}; see it with webhook deliveries --id ${String(options.id)}`,
      };
    },
  },
  replay: {
    usage: 'webhook replay --delivery-id ID',
    options: { 'delivery-id': { type: 'string' } },
    async run({ db, options }) {
      const id = requiredOption(options, 'delivery-id');
      const delivery = await findDelivery(db, id);
      if (!delivery) throw new AdminError(`no delivery "${id}"`);
      await replayWebhookDelivery(db, delivery);
      return { json: { delivery_id: id, status: 'pending' }, text: `delivery ${id} is due now (same delivery id)` };
    },
  },
};
