import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { DeliveryStatus } from '../db/tables/webhooks.js';
import { webhookEvents } from '../generated/contract.js';
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
  rotateSecret,
  setEnabled,
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

const EVENT_TYPES = Object.keys(webhookEvents);
const DELIVERY_STATUSES: DeliveryStatus[] = ['held', 'pending', 'delivered', 'failed'];
const DEFAULT_OVERLAP_HOURS = 24;
const DELIVERIES_SHOWN = 100;

function eventTypes(options: Options): string[] {
  const types = listOption(options, 'events') ?? [];
  if (types.length === 0)
    throw new AdminError(`--events is required: a comma-separated list of ${EVENT_TYPES.join(', ')}`);
  const unknown = types.filter((type) => !EVENT_TYPES.includes(type));
  if (unknown.length > 0)
    throw new AdminError(`unknown event types: ${unknown.join(', ')} (known: ${EVENT_TYPES.join(', ')})`);
  return [...new Set(types)];
}

function phiMode(options: Options): PhiMode {
  const mode = stringOption(options, 'phi-mode') ?? 'no_phi';
  if (!(PHI_MODES as readonly string[]).includes(mode))
    throw new AdminError(`--phi-mode must be ${PHI_MODES.join(' or ')}, got "${mode}"`);
  return mode as PhiMode;
}

function signingSecret(options: Options): string {
  const given = stringOption(options, 'secret');
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

/** Runs `run` as the operator's command `operation` on the subscription of --id, in its agency. */
async function onSubscriptionOf<T>(
  db: Kysely<DB>,
  options: Options,
  operation: string,
  run: (store: CommandStore, row: SubscriptionRow) => Promise<T>,
): Promise<T> {
  const row = await subscription(db, options);
  return asOperatorOn(db, row.agency_id, { ...ON_SUBSCRIPTIONS, operation }, (store) => {
    store.auditReferences([row.id]);
    return run(store, row);
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

/** A command that changes one subscription named by --id and shows it after. */
function onSubscription(
  usage: string,
  operation: string,
  act: (store: CommandStore, row: SubscriptionRow, options: Options) => Promise<string>,
  flags: string[] = [],
): Command {
  return {
    usage,
    options: { ...ID, ...Object.fromEntries(flags.map((flag) => [flag, { type: 'boolean' }])) },
    async run({ db, options }) {
      const note = await onSubscriptionOf(db, options, operation, (store, row) => act(store, row, options));
      const view = subscriptionView((await findSubscription(db, requiredOption(options, 'id')))!);
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
      const allowHttpLoopback = options['allow-http-loopback'] === true;
      const input = {
        agencyId,
        eventTypes: eventTypes(options),
        phiMode: phiMode(options),
        secret: signingSecret(options),
        baaSigned: options['baa-signed'] === true,
        allowHttpLoopback,
      };
      const url = await checkedReceiver(requiredOption(options, 'url'), allowHttpLoopback);
      const id = await asOperatorOn(
        db,
        agencyId,
        { ...ON_SUBSCRIPTIONS, operation: 'createWebhookSubscription' },
        async (store) => {
          const created = await createSubscription(store, keyEncryption(), { ...input, url });
          store.auditReferences([created]);
          return created;
        },
        { unknownAgency: noAgency },
      );
      const held = input.baaSigned
        ? ''
        : '\nClinical events are held until the business associate agreement is recorded: webhook baa --id ID --signed';
      return {
        json: {
          subscription_id: id,
          signing_secret: input.secret,
          url,
          events: input.eventTypes,
          phi_mode: input.phiMode,
          baa_signed: input.baaSigned,
        },
        text: `${describe({ subscription_id: id, signing_secret: input.secret, url, events: input.eventTypes, phi_mode: input.phiMode })}\nThe signing secret is shown once: store it with the receiver now.${held}`,
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
      if (overlapHours > 24 * 30) throw new AdminError('--overlap-hours must be at most 720 (30 days)');
      const secret = signingSecret(options);
      const retiresAt = await onSubscriptionOf(db, options, 'rotateWebhookSecret', (store, row) =>
        rotateSecret(store, keyEncryption(), row, secret, overlapHours),
      );
      const fields = {
        subscription_id: requiredOption(options, 'id'),
        signing_secret: secret,
        previous_secret_retires_at: retiresAt.toISOString(),
      };
      return {
        json: fields,
        text: `${describe(fields)}\nUntil then each delivery is signed with both (x-svc-signature-previous). The new secret is shown once.`,
      };
    },
  },
  disable: onSubscription('webhook disable --id ID', 'disableWebhookSubscription', async (store, row) => {
    await setEnabled(store, row, false);
    return 'disabled: nothing is delivered until it is enabled; pending deliveries wait';
  }),
  enable: onSubscription('webhook enable --id ID', 'enableWebhookSubscription', async (store, row) => {
    await setEnabled(store, row, true);
    return 'enabled: waiting deliveries are attempted again';
  }),
  baa: onSubscription(
    'webhook baa --id ID --signed',
    'recordWebhookBaaSigned',
    async (store, row, options) => {
      if (options.signed !== true)
        throw new AdminError('--signed is required: the agreement is recorded once it is signed');
      const released = await recordBaaSigned(store, row);
      return `business associate agreement recorded as signed; ${released} held deliveries released in event order`;
    },
    ['signed'],
  ),
  deliveries: {
    usage: `webhook deliveries --id ID [--status ${DELIVERY_STATUSES.join('|')}] (newest ${DELIVERIES_SHOWN} first)`,
    options: { ...ID, status: { type: 'string' } },
    async run({ db, options }) {
      const status = stringOption(options, 'status') as DeliveryStatus | undefined;
      if (status !== undefined && !DELIVERY_STATUSES.includes(status))
        throw new AdminError(`--status must be one of ${DELIVERY_STATUSES.join(', ')}`);
      const listed = await onSubscriptionOf(db, options, 'listWebhookDeliveries', (store, row) =>
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
  replay: {
    usage: 'webhook replay --delivery-id ID',
    options: { 'delivery-id': { type: 'string' } },
    async run({ db, options }) {
      const id = requiredOption(options, 'delivery-id');
      const delivery = await findDelivery(db, id);
      if (!delivery) throw new AdminError(`no delivery "${id}"`);
      await asOperatorOn(
        db,
        delivery.agency_id,
        { ...ON_SUBSCRIPTIONS, operation: 'replayWebhookDelivery' },
        async (store) => {
          store.auditReferences([delivery.subscription_id]);
          store.auditDetails({ delivery_id: id });
          const replayed = await replayDelivery(store, delivery);
          if (replayed) throw new AdminError(REPLAY_REFUSALS[replayed.refused](id));
        },
      );
      return { json: { delivery_id: id, status: 'pending' }, text: `delivery ${id} is due now (same delivery id)` };
    },
  },
};
