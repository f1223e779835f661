import { createPublicKey } from 'node:crypto';
import { createDecoder, createVerifier } from 'fast-jwt';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { ErrorCode } from '../generated/contract.js';
import { isStorableText } from '../domain/storable-text.js';
import { ASSERTION_ALGORITHMS, type ClientKeySets } from './client-keys.js';
import { BoundedMap } from './bounded-map.js';
import type { ClientPublicJwk } from '../db/tables/identity.js';

/**
 * Client authentication by a signed JWT (RFC 7523 private_key_jwt, as SMART Backend Services profiles it): iss and
 * sub the client id, aud the token endpoint's URL, exp at most five minutes ahead, a jti never accepted before, and
 * a kid naming one of the client's registered keys, verified with the one algorithm that key is pinned to.
 */

export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
export const MAX_ASSERTION_LIFETIME_SECONDS = 300;
/** Allowed difference between the client's clock and ours, on each side of exp. */
const ASSERTION_CLOCK_SKEW_SECONDS = 10;
const MAX_JTI_LENGTH = 256;
/** Verifiers kept, one per registered key in use. */
const KEPT_VERIFIERS = 1_000;

/**
 * A refusal for a fault in the assertion's own text, checked before anything stored is looked at: its code tells the
 * integration's administrator what to fix and tells a stranger nothing about the client, its keys or what was seen.
 */
export class AssertionRefused extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly nextStep: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(nextStep);
  }
}

interface AssertionClaims {
  clientId: string;
  kid: string;
  jti: string;
  exp: number;
}

const decode = createDecoder({ complete: true });

function decoded(assertion: string): { header: Record<string, unknown>; payload: Record<string, unknown> } | undefined {
  try {
    const { header, payload } = decode(assertion) as { header: unknown; payload: unknown };
    if (typeof header !== 'object' || header === null || typeof payload !== 'object' || payload === null)
      return undefined;
    return { header: header as Record<string, unknown>, payload: payload as Record<string, unknown> };
  } catch {
    return undefined;
  }
}

/** The client id an assertion claims, unverified: whose failures it counts toward. */
export function claimedClientId(assertion: string): string | undefined {
  const iss = decoded(assertion)?.payload.iss;
  return typeof iss === 'string' && isStorableText(iss) ? iss : undefined;
}

const text = (value: unknown, max = MAX_JTI_LENGTH) =>
  typeof value === 'string' && value !== '' && value.length <= max && isStorableText(value);

const malformed = (what: string) =>
  new AssertionRefused(
    'PLATFORM_CLIENT_ASSERTION_MALFORMED',
    `Send client_assertion as a signed JWT with ${what} (SMART Backend Services).`,
  );

function audienceMatches(aud: unknown, tokenEndpoint: string): boolean {
  return aud === tokenEndpoint || (Array.isArray(aud) && aud.length === 1 && aud[0] === tokenEndpoint);
}

/** The checks that need nothing stored; `clientId` is the client_id sent beside the assertion, if any. */
export function readAssertion(
  assertion: string,
  clientId: string | undefined,
  tokenEndpoint: string,
  now = Date.now(),
): AssertionClaims {
  const jwt = decoded(assertion);
  if (!jwt) throw malformed('a header, claims and signature (compact serialization)');
  const { header, payload } = jwt;
  if (!ASSERTION_ALGORITHMS.includes(header.alg as never)) {
    throw new AssertionRefused(
      'PLATFORM_CLIENT_ASSERTION_ALGORITHM',
      `Sign the assertion with ${ASSERTION_ALGORITHMS.join(' or ')} (the alg of its registered key).`,
      {
        allowed_algorithms: [...ASSERTION_ALGORITHMS],
      },
    );
  }
  if (!text(header.kid)) throw malformed('kid in its header naming the registered key that signed it');
  if (!text(payload.iss) || payload.sub !== payload.iss) throw malformed('iss and sub both the client id');
  if (clientId !== undefined && clientId !== payload.iss)
    throw malformed('iss and sub equal to the client_id sent beside it');
  if (!text(payload.jti)) throw malformed(`a jti of 1 to ${MAX_JTI_LENGTH} characters, new for each assertion`);
  if (!audienceMatches(payload.aud, tokenEndpoint)) {
    throw new AssertionRefused(
      'PLATFORM_CLIENT_ASSERTION_AUDIENCE',
      `Set aud to the token endpoint's URL, ${tokenEndpoint}.`,
      { expected_aud: tokenEndpoint },
    );
  }
  const seconds = now / 1000;
  const exp = payload.exp;
  if (
    typeof exp !== 'number' ||
    !Number.isFinite(exp) ||
    exp < seconds - ASSERTION_CLOCK_SKEW_SECONDS ||
    exp > seconds + MAX_ASSERTION_LIFETIME_SECONDS + ASSERTION_CLOCK_SKEW_SECONDS
  ) {
    throw new AssertionRefused(
      'PLATFORM_CLIENT_ASSERTION_LIFETIME',
      `Set exp to a time in the future at most ${MAX_ASSERTION_LIFETIME_SECONDS} seconds ahead, and keep the signing host's clock right.`,
      { max_lifetime_seconds: MAX_ASSERTION_LIFETIME_SECONDS },
    );
  }
  return { clientId: payload.iss as string, kid: header.kid as string, jti: payload.jti as string, exp };
}

/** The verified client: its agency (from its registered keys) and the assertion's id, to be spent, and until when it is. */
export interface VerifiedAssertion {
  clientId: string;
  agencyId: string;
  jti: string;
  expiresAt: Date;
}

/** A verifier pinned to one key and its one algorithm: alg none, HS256 keyed with the public key, or another key type's never pass. */
function verifierFor(key: ClientPublicJwk): (token: string) => unknown {
  return createVerifier({
    key: createPublicKey({ key, format: 'jwk' }).export({ format: 'pem', type: 'spki' }).toString(),
    algorithms: [key.alg],
    clockTolerance: ASSERTION_CLOCK_SKEW_SECONDS * 1000,
  });
}

export class ClientAssertions {
  /** By the key itself (its kid and public members): a key replaced under the same kid gets its own verifier. */
  private readonly verifiers = new BoundedMap<(token: string) => unknown>(KEPT_VERIFIERS);

  constructor(
    private readonly db: Kysely<DB>,
    private readonly keySets: ClientKeySets,
    private readonly tokenEndpoint: string,
  ) {}

  /**
   * Throws AssertionRefused for a fault in the text; undefined for every fault that depends on what is stored (no
   * such client, no key by that kid, a bad signature): those answer as one, like a bad secret.
   */
  async verify(assertion: string, clientId: string | undefined): Promise<VerifiedAssertion | undefined> {
    const claims = readAssertion(assertion, clientId, this.tokenEndpoint);
    const found = await this.keySets.keyFor(claims.clientId, claims.kid);
    if (!found) return undefined;
    const id = JSON.stringify(found.key);
    let verify = this.verifiers.get(id);
    if (!verify) this.verifiers.set(id, (verify = verifierFor(found.key)));
    try {
      verify(assertion);
    } catch {
      return undefined;
    }
    // Kept past exp by the skew allowed: until then the same assertion would still be accepted.
    return {
      clientId: claims.clientId,
      agencyId: found.agencyId,
      jti: claims.jti,
      expiresAt: new Date((claims.exp + ASSERTION_CLOCK_SKEW_SECONDS) * 1000),
    };
  }

  /**
   * Records the assertion's jti; false when it was already accepted and has not expired (a replay), on any process:
   * the insert and the check are one statement on one unique key.
   */
  async spend(verified: VerifiedAssertion): Promise<boolean> {
    const row = await this.db
      .insertInto('client_assertion_ids')
      .values({
        agency_id: verified.agencyId,
        client_id: verified.clientId,
        jti: verified.jti,
        expires_at: verified.expiresAt,
      })
      .onConflict((oc) =>
        oc
          .columns(['agency_id', 'client_id', 'jti'])
          .doUpdateSet({ expires_at: verified.expiresAt })
          .where('client_assertion_ids.expires_at', '<=', sql<Date>`now()`),
      )
      .returning('jti')
      .executeTakeFirst();
    return row !== undefined;
  }
}

/** Drops assertion ids whose assertions have expired (housekeeping): they can no longer be presented. */
export async function purgeExpiredAssertionIds(db: Kysely<DB>): Promise<number> {
  const result = await db
    .deleteFrom('client_assertion_ids')
    .where('expires_at', '<=', sql<Date>`now()`)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
