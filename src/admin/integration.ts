import { readFile } from 'node:fs/promises';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { ExtensionStatus } from '../db/tables/identity.js';
import type { PhiMode } from '../shared/principal.js';
import {
  CONTRACT_CAPABILITIES,
  CONTRACT_SCOPES,
  CURRENT_CONTRACT_VERSION,
  NON_COMMAND_CAPABILITIES,
  PHI_MODES,
  REGISTRABLE_CONTRACT_VERSIONS,
} from '../identity/grants.js';
import { hashSecret, newClientId, newClientSecret, secretLookupId } from '../identity/secrets.js';
import {
  checkKeySource,
  KeySetRefused,
  storeKeySet,
  type CheckedKeySet,
  type KeySource,
} from '../identity/client-keys.js';
import { fetchCheckedDocument } from '../events/receiver-request.js';
import { randomId } from '../shared/ids.js';
import type { CommandStore, TenantStore } from '../db/tenant-store.js';
import type { PlatformActor } from '../platform-commands/platform-command.js';
import {
  AdminError,
  describe,
  integerOption,
  listOption,
  requiredOption,
  stringOption,
  unreadable,
  type Command,
  type Commands,
  type Options,
} from './command.js';
import { asOperator, asOperatorOn, noAgency, type OperatorCommand } from './operator-command.js';

export interface IntegrationInput {
  agencyId: string;
  name: string;
  /** Default: every scope of the contract. */
  scopes?: string[];
  /** Default: every capability that is not a command. */
  capabilities?: string[];
  /** Default: no_phi. */
  phiModes?: PhiMode[];
  rateLimitPerMinute?: number;
  dailyQuota?: number;
  dailyCostBudget?: number | null;
  /** Default: the current version. */
  contractVersion?: string;
}

interface IntegrationRef {
  clientId: string;
  agencyId: string;
  extensionId: string;
}

export interface CreatedIntegration extends IntegrationRef {
  /** Shown once: only its hash is stored. */
  clientSecret: string;
}

export const DEFAULT_RATE_LIMIT_PER_MINUTE = 600;
export const DEFAULT_DAILY_QUOTA = 50_000;
/** How long the secrets a rotation replaces keep working, unless told. */
export const DEFAULT_OVERLAP_HOURS = 24;

function checkAllKnown(kind: string, values: readonly string[], known: readonly string[]): void {
  const unknown = values.filter((value) => !known.includes(value));
  if (unknown.length > 0) throw new AdminError(`unknown ${kind}: ${unknown.join(', ')} (known: ${known.join(', ')})`);
}

function checkGrants(input: Omit<IntegrationInput, 'agencyId'>): void {
  if (!input.name.trim()) throw new AdminError('the integration name must not be empty');
  checkAllKnown('scopes', input.scopes ?? [], CONTRACT_SCOPES);
  checkAllKnown('capabilities', input.capabilities ?? [], CONTRACT_CAPABILITIES);
  checkAllKnown('phi modes', input.phiModes ?? [], PHI_MODES);
  checkAllKnown(
    'contract version',
    input.contractVersion ? [input.contractVersion] : [],
    REGISTRABLE_CONTRACT_VERSIONS,
  );
}

async function insertSecret(store: CommandStore, clientId: string): Promise<string> {
  const secret = newClientSecret();
  await store
    .insertInto('client_secrets')
    .values({
      id: secretLookupId(secret),
      client_id: clientId,
      secret_hash: await hashSecret(secret),
      expires_at: null,
    })
    .execute();
  return secret;
}

/** What an integration command does, on the audit record: to the agency's extensions, never with PHI. */
const ON_INTEGRATIONS: Omit<OperatorCommand, 'operation'> = { resourceType: 'extension', phiMode: 'no_phi' };

/** An extension of the store's agency with its policy and a client id, before its first credential. */
async function addExtension(store: CommandStore, input: Omit<IntegrationInput, 'agencyId'>): Promise<IntegrationRef> {
  checkGrants(input);
  const extensionId = randomId('ext_', 12);
  const clientId = newClientId();
  await store
    .insertInto('extensions')
    .values({
      id: extensionId,
      name: input.name,
      scopes: [...(input.scopes ?? CONTRACT_SCOPES)],
      capabilities: [...(input.capabilities ?? NON_COMMAND_CAPABILITIES)],
      phi_modes: input.phiModes ?? ['no_phi'],
      rate_limit_per_minute: input.rateLimitPerMinute ?? DEFAULT_RATE_LIMIT_PER_MINUTE,
      daily_quota: input.dailyQuota ?? DEFAULT_DAILY_QUOTA,
      daily_cost_budget: input.dailyCostBudget ?? null,
      contract_version: input.contractVersion ?? CURRENT_CONTRACT_VERSION,
      tokens_revoked_before: null,
    })
    .execute();
  await store.insertInto('client_credentials').values({ client_id: clientId, extension_id: extensionId }).execute();
  store.auditReferences([extensionId]);
  return { agencyId: store.agencyId, extensionId, clientId };
}

/** An extension of the store's agency with its policy, a client id and a first secret. */
export async function addIntegration(
  store: CommandStore,
  input: Omit<IntegrationInput, 'agencyId'>,
): Promise<CreatedIntegration> {
  const ref = await addExtension(store, input);
  return { ...ref, clientSecret: await insertSecret(store, ref.clientId) };
}

const unknownAgency = (agencyId: string) => `${noAgency(agencyId)}; create it first with: agency create`;

/** addIntegration as the command createIntegration of the operator (or of `actor`), on the agency of `input`. */
export function createIntegration(
  db: Kysely<DB>,
  input: IntegrationInput,
  actor: PlatformActor = 'admin-cli',
): Promise<CreatedIntegration> {
  return asOperatorOn(
    db,
    input.agencyId,
    { ...ON_INTEGRATIONS, operation: 'createIntegration', actor },
    (store) => addIntegration(store, input),
    { unknownAgency },
  );
}

/** An integration that authenticates with the given keys (private_key_jwt) and has no secret. */
function createKeyIntegration(db: Kysely<DB>, input: IntegrationInput, keys: CheckedKeySet): Promise<IntegrationRef> {
  return asOperatorOn(
    db,
    input.agencyId,
    { ...ON_INTEGRATIONS, operation: 'createIntegration' },
    async (store) => {
      const ref = await addExtension(store, input);
      await storeKeySet(store, ref.clientId, keys);
      return ref;
    },
    { unknownAgency },
  );
}

/**
 * Runs `run` as the operator's (or `actor`'s) command `operation` on the integration of a client id, in its agency: a
 * client id names one integration, whichever agency's, so it is looked up before the agency's store exists.
 */
export async function onIntegrationOf<T>(
  db: Kysely<DB>,
  clientId: string,
  operation: string,
  run: (store: CommandStore, ref: IntegrationRef) => Promise<T>,
  actor: PlatformActor = 'admin-cli',
): Promise<T> {
  const row = await db
    .selectFrom('client_credentials')
    .select(['agency_id', 'extension_id'])
    .where('client_id', '=', clientId)
    .executeTakeFirst();
  if (!row) throw new AdminError(`no integration with client id "${clientId}"`);
  const ref = { clientId, agencyId: row.agency_id, extensionId: row.extension_id };
  return asOperatorOn(db, ref.agencyId, { ...ON_INTEGRATIONS, operation, actor }, (store) => {
    store.auditReferences([ref.extensionId]);
    return run(store, ref);
  });
}

const updateExtension = (store: CommandStore, ref: IntegrationRef) =>
  store.updateTable('extensions').where('id', '=', ref.extensionId);

export function setIntegrationStatus(
  db: Kysely<DB>,
  clientId: string,
  status: ExtensionStatus,
  actor?: PlatformActor,
): Promise<IntegrationRef> {
  const operation = status === 'active' ? 'enableIntegration' : 'disableIntegration';
  return onIntegrationOf(
    db,
    clientId,
    operation,
    async (store, ref) => {
      await updateExtension(store, ref).set({ status, updated_at: sql`now()` }).execute();
      return ref;
    },
    actor,
  );
}

/** Every token issued to the integration until now stops working (within the policy cache bound). */
export function revokeIntegrationTokens(
  db: Kysely<DB>,
  clientId: string,
  actor?: PlatformActor,
): Promise<IntegrationRef & { revokedBefore: Date }> {
  return onIntegrationOf(
    db,
    clientId,
    'revokeIntegrationTokens',
    async (store, ref) => {
      const row = await updateExtension(store, ref)
        .set({ tokens_revoked_before: sql`now()`, updated_at: sql`now()` })
        .returning('tokens_revoked_before')
        .executeTakeFirstOrThrow();
      return { ...ref, revokedBefore: row.tokens_revoked_before! };
    },
    actor,
  );
}

/** A new secret; the current ones keep working for the overlap window, so clients can switch without downtime. */
export function rotateClientSecret(db: Kysely<DB>, clientId: string, overlapHours: number, actor?: PlatformActor) {
  return onIntegrationOf(
    db,
    clientId,
    'rotateClientSecret',
    async (store, ref) => {
      const previousExpireAt = await store
        .updateTable('client_secrets')
        .set({ expires_at: sql`now() + make_interval(hours => ${overlapHours})` })
        .where('client_id', '=', clientId)
        .where((eb) =>
          eb.or([
            eb('expires_at', 'is', null),
            eb('expires_at', '>', sql<Date>`now() + make_interval(hours => ${overlapHours})`),
          ]),
        )
        .returning('expires_at')
        .execute();
      const clientSecret = await insertSecret(store, clientId);
      return { ...ref, clientSecret, previousSecretsExpireAt: previousExpireAt[0]?.expires_at ?? null };
    },
    actor,
  );
}

/** Registers or replaces the keys an integration signs its client assertions with; its secrets are left as they are. */
export function setIntegrationKeys(db: Kysely<DB>, clientId: string, keys: CheckedKeySet): Promise<IntegrationRef> {
  return onIntegrationOf(db, clientId, 'setIntegrationKeys', async (store, ref) => {
    await storeKeySet(store, clientId, keys);
    return ref;
  });
}

/** The agency's integrations as the CLI lists them and the console shows them: never a secret, only public keys. */
export async function listIntegrations(store: TenantStore) {
  const extensions = await store.selectFrom('extensions').selectAll().orderBy('created_at').execute();
  const secrets = await store
    .selectFrom('client_credentials as c')
    .leftJoin('client_secrets as s', (join) =>
      join
        .on(store.ofAgency('s'))
        .onRef('s.client_id', '=', 'c.client_id')
        .on((eb) => eb.or([eb('s.expires_at', 'is', null), eb('s.expires_at', '>', sql<Date>`now()`)])),
    )
    .select(['c.client_id', 'c.extension_id', 's.created_at', 's.expires_at'])
    .orderBy('s.created_at')
    .execute();
  const keySets = await store
    .selectFrom('client_key_sets')
    .select(['client_id', 'jwks', 'jwks_url', 'updated_at'])
    .execute();
  return extensions.map((e) => {
    const own = secrets.filter((s) => s.extension_id === e.id);
    const activeSecrets = own.filter((s) => s.created_at);
    const keys = keySets.find((k) => own.some((s) => s.client_id === k.client_id));
    return {
      extension_id: e.id,
      name: e.name,
      status: e.status,
      client_ids: [...new Set(own.map((s) => s.client_id))],
      scopes: e.scopes,
      capabilities: e.capabilities,
      phi_modes: e.phi_modes,
      rate_limit_per_minute: e.rate_limit_per_minute,
      daily_quota: e.daily_quota,
      daily_cost_budget: e.daily_cost_budget,
      contract_version: e.contract_version,
      tokens_revoked_before: e.tokens_revoked_before?.toISOString() ?? null,
      // Secrets themselves are never shown again; only when each was created and until when it works.
      active_secrets: activeSecrets.map((s) => ({
        created_at: s.created_at!.toISOString(),
        expires_at: s.expires_at?.toISOString() ?? null,
      })),
      authentication: [...(activeSecrets.length > 0 ? ['client_secret'] : []), ...(keys ? ['private_key_jwt'] : [])],
      // Public keys only: the kids, and where they come from.
      keys: keys
        ? { kids: keys.jwks.keys.map((k) => k.kid), jwks_url: keys.jwks_url, updated_at: keys.updated_at.toISOString() }
        : null,
      created_at: e.created_at.toISOString(),
    };
  });
}

function grantList(options: Options, name: string, all: readonly string[]): string[] | undefined {
  const list = listOption(options, name);
  return list?.length === 1 && list[0] === 'all' ? [...all] : list;
}

function integrationInput(options: Options): IntegrationInput {
  return {
    agencyId: requiredOption(options, 'agency'),
    name: requiredOption(options, 'name'),
    scopes: grantList(options, 'scopes', CONTRACT_SCOPES),
    capabilities: grantList(options, 'capabilities', CONTRACT_CAPABILITIES),
    phiModes: listOption(options, 'phi-modes') as PhiMode[] | undefined,
    rateLimitPerMinute: integerOption(options, 'rate-limit', 1),
    dailyQuota: integerOption(options, 'daily-quota', 1),
    dailyCostBudget: integerOption(options, 'cost-budget', 0),
    contractVersion: stringOption(options, 'contract-version'),
  };
}

const CLIENT_ID = { 'client-id': { type: 'string' } } as const;

const refJson = (ref: IntegrationRef) => ({
  client_id: ref.clientId,
  agency_id: ref.agencyId,
  extension_id: ref.extensionId,
});

/** A command acting on one integration named by --client-id. */
function onIntegration(
  usage: string,
  act: (db: Kysely<DB>, clientId: string) => Promise<IntegrationRef>,
  done: string,
): Command {
  return {
    usage,
    options: CLIENT_ID,
    async run({ db, options }) {
      const json = refJson(await act(db, requiredOption(options, 'client-id')));
      return { json, text: `${done}\n${describe(json)}` };
    },
  };
}

const KEY_OPTIONS = {
  'jwks-file': { type: 'string' },
  'jwks-url': { type: 'string' },
  'allow-http-loopback': { type: 'boolean' },
} as const;
const KEY_USAGE = '--jwks-file FILE | --jwks-url URL [--allow-http-loopback] (development)';

/** Keys from --jwks-file or --jwks-url, checked (and fetched) before anything is written; undefined when neither is given. */
async function keySource(options: Options): Promise<CheckedKeySet | undefined> {
  const file = stringOption(options, 'jwks-file');
  const url = stringOption(options, 'jwks-url');
  if (file !== undefined && url !== undefined) throw new AdminError('give --jwks-file or --jwks-url, not both');
  if (file === undefined && url === undefined) return undefined;
  let source: KeySource;
  if (file !== undefined) {
    const text = await readFile(file, 'utf8').catch((err: unknown) => Promise.reject(unreadable(file, err)));
    try {
      source = { jwks: JSON.parse(text) };
    } catch {
      throw new AdminError(`${file} is not JSON: a JWKS is {"keys": [...]}`);
    }
  } else source = { jwksUrl: url!, allowHttpLoopback: options['allow-http-loopback'] === true };
  try {
    return await checkKeySource(fetchCheckedDocument, source);
  } catch (err) {
    if (err instanceof KeySetRefused) throw new AdminError(`${file ?? url}: ${err.message}`);
    throw err;
  }
}

function keysJson(keys: CheckedKeySet) {
  return { kids: keys.jwks.keys.map((k) => k.kid), jwks_url: keys.jwksUrl };
}

export const integrationCommands: Commands = {
  create: {
    usage:
      'integration create --agency ID --name NAME [--scopes all|a,b] [--capabilities all|a,b] [--phi-modes no_phi,phi] ' +
      `[--rate-limit N] [--daily-quota N] [--cost-budget N] [--contract-version 2] [${KEY_USAGE}] (keys instead of a secret)`,
    options: {
      ...Object.fromEntries(
        [
          'agency',
          'name',
          'scopes',
          'capabilities',
          'phi-modes',
          'rate-limit',
          'daily-quota',
          'cost-budget',
          'contract-version',
        ].map((name) => [name, { type: 'string' }]),
      ),
      ...KEY_OPTIONS,
    },
    fileOptions: ['jwks-file'],
    async run({ db, options }) {
      const input = integrationInput(options);
      const keys = await keySource(options);
      if (keys) {
        const created = await createKeyIntegration(db, input, keys);
        const json = { ...refJson(created), keys: keysJson(keys) };
        return {
          json,
          text: `Created integration ${created.extensionId}; it authenticates with its keys (private_key_jwt), and has no secret.\n${describe({ ...json, keys: json.keys.kids })}`,
        };
      }
      const created = await createIntegration(db, input);
      const json = {
        client_id: created.clientId,
        client_secret: created.clientSecret,
        extension_id: created.extensionId,
        agency_id: created.agencyId,
      };
      return {
        json,
        text: `Created integration ${created.extensionId}. The client secret is shown only this once: store it now.\n${describe(json)}`,
      };
    },
  },

  keys: {
    usage: `integration keys --client-id ID ${KEY_USAGE} (replaces its keys; a JWKS URL is fetched again when an unknown kid arrives)`,
    options: { ...CLIENT_ID, ...KEY_OPTIONS },
    fileOptions: ['jwks-file'],
    async run({ db, options }) {
      const clientId = requiredOption(options, 'client-id');
      const keys = await keySource(options);
      if (!keys) throw new AdminError('--jwks-file or --jwks-url is required');
      const ref = await setIntegrationKeys(db, clientId, keys);
      const json = { ...refJson(ref), keys: keysJson(keys) };
      return { json, text: `The integration's keys are replaced.\n${describe({ ...json, keys: json.keys.kids })}` };
    },
  },
  list: {
    usage: 'integration list --agency ID',
    options: { agency: { type: 'string' } },
    async run(ctx) {
      const integrations = await asOperator(
        ctx,
        { ...ON_INTEGRATIONS, operation: 'listIntegrations' },
        listIntegrations,
      );
      const text =
        integrations.length === 0
          ? 'No integrations.'
          : integrations
              .map((i) => describe({ ...i, active_secrets: i.active_secrets.length, keys: i.keys?.kids }))
              .join('\n\n');
      return { json: { integrations }, text };
    },
  },
  disable: onIntegration(
    'integration disable --client-id ID',
    (db, id) => setIntegrationStatus(db, id, 'disabled'),
    'Integration disabled: it gets no tokens and its tokens are refused.',
  ),
  enable: onIntegration(
    'integration enable --client-id ID',
    (db, id) => setIntegrationStatus(db, id, 'active'),
    'Integration enabled.',
  ),
  'revoke-tokens': onIntegration(
    'integration revoke-tokens --client-id ID',
    revokeIntegrationTokens,
    'Every token issued to the integration until now is revoked.',
  ),
  'rotate-secret': {
    usage: `integration rotate-secret --client-id ID [--overlap-hours N] (default ${DEFAULT_OVERLAP_HOURS})`,
    options: { ...CLIENT_ID, 'overlap-hours': { type: 'string' } },
    async run({ db, options }) {
      const overlapHours = integerOption(options, 'overlap-hours', 0) ?? DEFAULT_OVERLAP_HOURS;
      const rotated = await rotateClientSecret(db, requiredOption(options, 'client-id'), overlapHours);
      const json = {
        client_id: rotated.clientId,
        client_secret: rotated.clientSecret,
        agency_id: rotated.agencyId,
        extension_id: rotated.extensionId,
        previous_secrets_expire_at: rotated.previousSecretsExpireAt?.toISOString() ?? null,
      };
      return {
        json,
        text: `New client secret, shown only this once; the previous one works for ${overlapHours} more hours.\n${describe(json)}`,
      };
    },
  },
};
