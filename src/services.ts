import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Config } from './config.js';
import type { DB } from './db/schema.js';
import { Authenticator } from './identity/authenticator.js';
import { ClientCredentialsGrant } from './identity/client-credentials.js';
import { ClientAssertions } from './identity/client-assertions.js';
import { ClientKeySets } from './identity/client-keys.js';
import { fetchCheckedDocument } from './events/receiver-request.js';
import { operations } from './generated/contract.js';
import { ExtensionPolicies } from './identity/extension-policies.js';
import type { KeyEncryption } from './identity/key-encryption.js';
import { KeyRing } from './identity/signing-keys.js';
import { TokenFailureLimiter } from './identity/token-failures.js';
import { TokenSigner, createTokenVerifier, type TokenSettings } from './identity/tokens.js';
import { AuditBuffer } from './gateway/audit.js';
import { MeteringBuffer } from './gateway/core/metering.js';
import { UsageLimiter } from './gateway/core/usage-limits.js';
import { CursorSeal } from './identity/cursor-seal.js';
import type { EventOutbox } from './db/tenant-store.js';
import { webhookOutbox } from './events/outbox.js';
import { watchOutboxDepth } from './events/outbox-depth.js';
import { QueryTokenVerifier } from './identity/query-tokens.js';
import type { ServiceMetrics } from './observability/metrics.js';

/** The long-lived collaborators of one app instance, built once and handed to routes and the gateway. */
export interface AppServices {
  config: Config;
  keyRing: KeyRing;
  tokenSigner: TokenSigner;
  /** Bearer-token authentication of partition routes. */
  authenticator: Authenticator;
  /** The token endpoint. */
  clientCredentials: ClientCredentialsGrant;
  /** Leases shared usage counters; close() hands back what was not spent. */
  usageLimiter: UsageLimiter;
  /** Buffered off the hot path, written by their flush workers (started with the app's other workers, src/app.ts). */
  metering: MeteringBuffer;
  audit: AuditBuffer;
  cursorSeal: CursorSeal;
  /** Where commands' events go: the webhooks outbox, in each command's transaction. */
  outbox: EventOutbox;
  /** Hands back unspent usage leases. */
  close(): Promise<void>;
}

export function tokenSettings(config: Config): TokenSettings {
  return { issuer: config.tokenIssuer, audience: config.tokenAudience, ttlSeconds: config.tokenTtlSeconds };
}

/** Assertions are addressed to the token endpoint's own URL; keys at a JWKS URL are fetched like webhook receivers are reached. */
function clientAssertions(config: Config, db: Kysely<DB>, log: FastifyBaseLogger): ClientAssertions {
  const keySets = new ClientKeySets(db, fetchCheckedDocument, (clientId, reason) =>
    log.warn({ client_id: clientId, reason }, 'JWKS URL not fetched again; the keys fetched before stay in use'),
  );
  return new ClientAssertions(db, keySets, `${config.tokenIssuer}${operations.issueToken.path}`);
}

/**
 * Builds, and starts nothing: the app starts every worker in one place. `keyEncryption` opens the secrets the database
 * stores sealed (signing keys, the cursor key); `metrics`, when on, hears from the buffers and the token endpoint.
 */
export function createServices(
  config: Config,
  db: Kysely<DB>,
  keyEncryption: KeyEncryption,
  log: FastifyBaseLogger,
  metrics?: ServiceMetrics,
): AppServices {
  const settings = tokenSettings(config);
  const keyRing = new KeyRing(db, keyEncryption, config.tokenTtlSeconds);
  const tokenSigner = new TokenSigner(keyRing, settings);
  const metering: MeteringBuffer = new MeteringBuffer(db, log, {
    observer: metrics?.buffer('metering', () => metering.pending),
  });
  const audit: AuditBuffer = new AuditBuffer(db, log, { observer: metrics?.buffer('audit', () => audit.pending) });
  const usageLimiter = new UsageLimiter(db);
  if (metrics) watchOutboxDepth(db, metrics.registrar);
  // Units not handed back stay counted until their window ends, as after a crash: a bounded loss, not a failed shutdown.
  const returnLeases = () =>
    usageLimiter.close().catch((err: unknown) => log.error({ err }, 'leased usage units not handed back at shutdown'));
  return {
    config,
    keyRing,
    tokenSigner,
    authenticator: new Authenticator(
      createTokenVerifier(keyRing, settings),
      new ExtensionPolicies(db, config.authStateTtlMs),
      undefined,
      new QueryTokenVerifier(db),
    ),
    clientCredentials: new ClientCredentialsGrant(
      db,
      tokenSigner,
      new TokenFailureLimiter(db),
      clientAssertions(config, db, log),
      metrics?.tokens(),
    ),
    usageLimiter,
    metering,
    audit,
    cursorSeal: new CursorSeal(db, keyEncryption),
    outbox: webhookOutbox,
    close: returnLeases,
  };
}
