import { TokenError } from 'fast-jwt';
import type { ExtensionPolicy, PhiMode, Principal } from '../shared/principal.js';
import type { ErrorCode } from '../generated/contract.js';
import { PlatformError } from '../shared/platform-error.js';
import { RequestError } from '../shared/request-error.js';
import type { ExtensionPolicies } from './extension-policies.js';
import { PHI_MODES } from './grants.js';
import { BoundedMap } from './bounded-map.js';
import { UnknownSigningKeyError, type TokenVerifier } from './tokens.js';
import { isQueryTokenAuthorization, type QueryTokenVerifier } from './query-tokens.js';
import { queryTokenElsewhere, WWW_AUTHENTICATE } from '../domain/access-policy.js';

export { WWW_AUTHENTICATE };

export interface Authentication {
  principal: Principal;
  policy: ExtensionPolicy;
}

// RFC 6750 2.1: "Bearer" 1*SP b64token.
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

function unauthorized(code: ErrorCode, message: string): RequestError {
  return new RequestError(401, 'invalid_token', code, message, { headers: { 'www-authenticate': WWW_AUTHENTICATE } });
}

/** One answer for every forged, foreign or malformed token: which check failed is not disclosed. */
const invalidToken = () => unauthorized('PLATFORM_INVALID_CREDENTIAL', 'The access token is not valid.');

function bearerToken(authorization: string | undefined): string {
  const match = authorization === undefined ? null : BEARER.exec(authorization);
  if (!match) {
    throw unauthorized(
      'PLATFORM_AUTHENTICATION_REQUIRED',
      'Send "Authorization: Bearer <access token>"; tokens come from POST /api/v1/oauth/token.',
    );
  }
  return match[1];
}

const tokenExpired = () =>
  unauthorized('PLATFORM_TOKEN_EXPIRED', 'The access token has expired; request a new one with client_credentials.');

/** fast-jwt checks the signature before the claims: an expired token is one this service signed. */
const isExpiry = (err: unknown) => err instanceof TokenError && err.code === TokenError.codes.expired;

function verificationFailure(err: unknown): Error {
  if (err instanceof UnknownSigningKeyError) return invalidToken();
  // A key lookup that failed for another reason (the database) is not the caller's fault.
  if (!(err instanceof TokenError)) return err as Error;
  return isExpiry(err) ? tokenExpired() : invalidToken();
}

const isString = (value: unknown): value is string => typeof value === 'string' && value !== '';

/** Distinct scope claims kept at once; an integration's tokens all carry one, so this only bounds memory. */
const scopeSets = new BoundedMap<ReadonlySet<string>>(1_000);

/**
 * The scopes of a claim, one set per distinct claim: splitting it into a new set cost a fresh token's authentication
 * a few µs, and every remembered token held its own copy. Only verified claims get here, so the claims are ours.
 */
function scopesOf(scope: string): ReadonlySet<string> {
  let scopes = scopeSets.get(scope);
  if (!scopes) scopeSets.set(scope, (scopes = new Set(scope.split(' ').filter(Boolean))));
  return scopes;
}

/** Signed claims are still checked for shape: a token is accepted only as the issuer writes them. */
function principalOf(claims: Record<string, unknown>): Principal {
  const { sub, client_id, agency_id, phi_mode, scope, jti, iat, exp } = claims;
  if (!isString(sub) || !isString(client_id) || !isString(agency_id) || !isString(jti) || typeof scope !== 'string')
    throw invalidToken();
  if (!PHI_MODES.includes(phi_mode as PhiMode) || typeof iat !== 'number' || typeof exp !== 'number')
    throw invalidToken();
  return {
    agencyId: agency_id,
    extensionId: sub,
    clientId: client_id,
    phiMode: phi_mode as PhiMode,
    scopes: scopesOf(scope),
    tokenId: jti,
    issuedAt: new Date(iat * 1000),
    expiresAt: new Date(exp * 1000),
  };
}

function admitted(principal: Principal, policy: ExtensionPolicy | undefined): Authentication {
  if (!policy) throw invalidToken();
  checkPolicy(principal, policy);
  return { principal, policy };
}

function checkPolicy(principal: Principal, policy: ExtensionPolicy): void {
  const revokedBefore = policy.tokensRevokedBefore;
  // iat has whole seconds: a token from the second of a revocation counts as revoked (safe side).
  if (policy.revokedTokenIds.has(principal.tokenId) || (revokedBefore && principal.issuedAt < revokedBefore)) {
    throw unauthorized(
      'PLATFORM_TOKEN_REVOKED',
      'The access token has been revoked; request a new one with client_credentials.',
    );
  }
  if (policy.status !== 'active') {
    throw new PlatformError(
      'PLATFORM_EXTENSION_DISABLED',
      'This integration has been disabled by an agency administrator.',
    );
  }
}

const rememberedBy = (authorization: string) => authorization.slice(-43);

function queryTokenRefusal(principal: Principal, revoked: boolean, nowMs: number): RequestError | undefined {
  if (revoked)
    return unauthorized(
      'PLATFORM_TOKEN_REVOKED',
      'This query token has been revoked; create a new one (POST /api/v1/ext/query-tokens).',
    );
  if (principal.expiresAt.getTime() <= nowMs)
    return unauthorized(
      'PLATFORM_TOKEN_EXPIRED',
      'This query token has expired; create a new one (POST /api/v1/ext/query-tokens).',
    );
  return undefined;
}

/** Verified tokens remembered at once; past it the oldest is forgotten (and verified again if it comes back). */
const MAX_REMEMBERED_TOKENS = 10_000;

interface Remembered {
  authorization: string;
  /** Undefined for a token refused as expired. */
  principal: Principal | undefined;
}

/**
 * Establishes the caller of a partition route from its bearer token. With a reused token and a warm policy
 * cache this does no I/O and no cryptography: a verified token's principal is remembered, by the exact
 * Authorization header that carried it. Expiry is final, so an expired token, remembered or refused once, is
 * refused without another signature check (a client that keeps sending one would otherwise cost one per call).
 */
export class Authenticator {
  /** By the header's last characters (part of the signature): hashing a whole header cost more than the rest of a warm authentication. */
  private readonly principals: BoundedMap<Remembered>;

  constructor(
    private readonly verify: TokenVerifier,
    private readonly policies: ExtensionPolicies,
    rememberedTokens = MAX_REMEMBERED_TOKENS,
    /** Without one, query tokens are refused everywhere. */
    private readonly queryTokens?: QueryTokenVerifier,
  ) {
    this.principals = new BoundedMap(rememberedTokens);
  }

  /**
   * `acceptsQueryToken`: the operation takes a governed query token (x-svc-query-token); elsewhere one is refused
   * before any lookup. A query token is never remembered: each use reads its row (query-tokens.ts).
   */
  async authenticate(authorization: string | undefined, acceptsQueryToken = false): Promise<Authentication> {
    if (isQueryTokenAuthorization(authorization))
      return this.queryTokenAuthentication(authorization!, acceptsQueryToken);
    const principal = this.remembered(authorization) ?? (await this.verified(authorization));
    return admitted(principal, await this.policies.get(principal.agencyId, principal.extensionId));
  }

  private async queryTokenAuthentication(authorization: string, accepted: boolean): Promise<Authentication> {
    if (!accepted || !this.queryTokens) throw queryTokenElsewhere();
    const found = await this.queryTokens.lookup(bearerToken(authorization));
    if (!found.found) throw invalidToken();
    const refusal = queryTokenRefusal(found.principal, found.revoked, Date.now());
    if (refusal) throw refusal;
    return admitted(found.principal, await this.policies.get(found.principal.agencyId, found.principal.extensionId));
  }

  /**
   * For a principal another transport established from a token of its own: the checks of a remembered token
   * (expiry, revocation, the integration's status) against the integration's current policy.
   */
  async authenticatePrincipal(principal: Principal): Promise<Authentication> {
    if (principal.expiresAt.getTime() <= Date.now()) throw tokenExpired();
    return admitted(principal, await this.policies.get(principal.agencyId, principal.extensionId));
  }

  /**
   * The same answer without I/O or a promise when the token and its policy are both remembered (a reused token);
   * undefined when authenticate() has to do the work.
   */
  authenticateNow(authorization: string | undefined, nowMs: number = Date.now()): Authentication | undefined {
    const principal = this.remembered(authorization, nowMs);
    if (!principal) return undefined;
    const cached = this.policies.cached(principal.agencyId, principal.extensionId, nowMs);
    return cached && admitted(principal, cached.policy);
  }

  private remembered(authorization: string | undefined, nowMs: number = Date.now()): Principal | undefined {
    const entry = authorization === undefined ? undefined : this.principals.get(rememberedBy(authorization));
    if (!entry || entry.authorization !== authorization) return undefined;
    if (!entry.principal || entry.principal.expiresAt.getTime() <= nowMs) throw tokenExpired();
    return entry.principal;
  }

  private async verified(authorization: string | undefined): Promise<Principal> {
    const token = bearerToken(authorization);
    const key = rememberedBy(authorization!);
    let claims: Record<string, unknown>;
    try {
      claims = await this.verify(token);
    } catch (err) {
      if (isExpiry(err)) this.principals.set(key, { authorization: authorization!, principal: undefined });
      else this.principals.delete(key);
      throw verificationFailure(err);
    }
    const principal = principalOf(claims);
    this.principals.set(key, { authorization: authorization!, principal });
    return principal;
  }
}
