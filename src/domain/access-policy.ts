import { PlatformError } from '../shared/platform-error.js';
import { RequestError } from '../shared/request-error.js';
import { PSEUDONYM_PREFIX, type PseudonymKind } from '../shared/ids.js';
import type { ExtensionPolicy, PhiMode, Principal } from '../shared/principal.js';

/**
 * Who may do what, in one place and without I/O: an operation's access (x-svc-scope, x-svc-capability,
 * x-svc-command, x-svc-no-phi, x-svc-query-token), a governed query's (its run and the tokens made for it), and how
 * each PHI mode addresses a resource. Each function answers the refusal the contract documents, or undefined.
 */

export const WWW_AUTHENTICATE = 'Bearer realm="extension-api", error="invalid_token"';

/** An operation's access rules, as the route table states them. */
export interface OperationRules {
  operationId: string;
  scope: string | null;
  capability: string;
  command: boolean;
  noPhi: string;
  queryTokens: boolean;
}

/** A governed query's access rules: the scope and capability of the data it reads. */
export interface QueryRules {
  id: string;
  scope: string;
  capability: string;
  noPhiDenied?: true;
}

/** The scope and capability of running any governed query (runQuery's), which a query token's creator must hold too. */
const QUERY_RUN = { scope: 'external:queries:run', capability: 'queries.run' } as const;

/** A query token anywhere but its query's run: refused as an unknown credential, before any lookup. */
export const queryTokenElsewhere = () =>
  new RequestError(
    401,
    'invalid_token',
    'PLATFORM_INVALID_CREDENTIAL',
    'A query token (qt_…) is accepted only by POST /api/v1/ext/queries/{its query}/run; this route needs an access token from POST /api/v1/oauth/token.',
    {
      headers: { 'www-authenticate': WWW_AUTHENTICATE },
    },
  );

const phiModeWithdrawn = (phiMode: PhiMode) =>
  new PlatformError(
    'PLATFORM_PHI_MODE_DENIED',
    `The integration may no longer use the ${phiMode} mode; request a new token.`,
    { phi_mode: phiMode },
  );

/** A token alone gives no write permission: the agency's policy must list the operation's capability. */
export function operationRefusal(
  operation: OperationRules,
  principal: Principal,
  policy: ExtensionPolicy,
): Error | undefined {
  if (principal.queryToken && !operation.queryTokens) return queryTokenElsewhere();
  if (operation.scope && !principal.scopes.has(operation.scope)) {
    return new PlatformError(
      'PLATFORM_SCOPE_NOT_GRANTED',
      `This operation needs the scope ${operation.scope}, which the token does not carry.`,
      {
        required_scope: operation.scope,
      },
    );
  }
  if (!policy.capabilities.has(operation.capability)) {
    const code = operation.command ? 'PLATFORM_POLICY_DENIED' : 'PLATFORM_CAPABILITY_NOT_ALLOWED';
    return new PlatformError(
      code,
      `The agency's extension policy does not permit ${operation.capability}. An agency administrator can grant it.`,
      {
        capability: operation.capability,
      },
    );
  }
  if (!policy.phiModes.has(principal.phiMode)) return phiModeWithdrawn(principal.phiMode);
  if (principal.phiMode === 'no_phi' && operation.noPhi === 'denied') {
    return new PlatformError(
      'PLATFORM_PHI_MODE_DENIED',
      `${operation.operationId} is available in phi sessions only.`,
      {
        phi_mode: principal.phiMode,
        operation_id: operation.operationId,
      },
    );
  }
  return undefined;
}

const queryNotAllowed = (message: string, details: Record<string, string>) =>
  new PlatformError('PLATFORM_QUERY_NOT_ALLOWED', message, details);

const missingScope = (query: QueryRules, scope: string) =>
  queryNotAllowed(`${query.id} needs the scope ${scope}, which the token does not carry.`, {
    query_id: query.id,
    required_scope: scope,
  });

const missingCapability = (query: QueryRules, capability: string) =>
  queryNotAllowed(
    `The agency's extension policy does not permit ${capability}, which ${query.id} needs. An agency administrator can grant it.`,
    {
      query_id: query.id,
      capability,
    },
  );

const phiSessionsOnly = (query: QueryRules, phiMode: PhiMode) =>
  new PlatformError('PLATFORM_PHI_MODE_DENIED', `${query.id} is available in phi sessions only.`, {
    phi_mode: phiMode,
    query_id: query.id,
  });

/**
 * A run of a query, after runQuery's own access: a query token runs only its own query, and its scopes were its
 * creator's (checked when it was made); the agency's policy and the PHI mode are checked at every run.
 */
export function queryRunRefusal(
  query: QueryRules,
  principal: Principal,
  policy: ExtensionPolicy,
): PlatformError | undefined {
  const grant = principal.queryToken;
  if (grant && grant.queryId !== query.id)
    return queryNotAllowed(`This query token runs only ${grant.queryId}.`, {
      query_id: query.id,
      token_query_id: grant.queryId,
    });
  if (!grant && !principal.scopes.has(query.scope)) return missingScope(query, query.scope);
  if (!policy.capabilities.has(query.capability)) return missingCapability(query, query.capability);
  if (principal.phiMode === 'no_phi' && query.noPhiDenied) return phiSessionsOnly(query, principal.phiMode);
  return undefined;
}

/**
 * A query token never reaches further than the session and the policy that create it: they must be able to run the
 * query themselves, and a phi token needs a phi session of an integration permitted phi.
 */
export function queryTokenRefusal(
  query: QueryRules,
  principal: Principal,
  policy: ExtensionPolicy,
  phiMode: PhiMode,
): PlatformError | undefined {
  const scope = [QUERY_RUN.scope, query.scope].find((s) => !principal.scopes.has(s));
  if (scope) return missingScope(query, scope);
  const capability = [QUERY_RUN.capability, query.capability].find((c) => !policy.capabilities.has(c));
  if (capability) return missingCapability(query, capability);
  if (phiMode === 'phi' && (principal.phiMode !== 'phi' || !policy.phiModes.has('phi'))) {
    return new PlatformError(
      'PLATFORM_PHI_MODE_DENIED',
      'A phi query token can be created only from a phi session of an integration permitted phi.',
      { phi_mode: phiMode },
    );
  }
  if (phiMode === 'no_phi' && query.noPhiDenied) return phiSessionsOnly(query, phiMode);
  return undefined;
}

const ADDRESSED: Record<PseudonymKind, string> = {
  patient: 'a patient',
  physician: 'a physician',
  physician_order: 'an order',
  claim: 'a claim',
  payer_claim: "a payer's claim",
  member: 'a member',
};

/**
 * How a session addresses a resource that no_phi sessions see by handle, for a kind whose real ids never start with
 * its handle's prefix (physician orders': a check on their table), so that each is told from the other: a no_phi
 * session sends the handle its lists gave, a phi session the id. Answers whether `sent` is a handle to resolve, or
 * throws the refusal.
 */
export function isAddressedByHandle(kind: PseudonymKind, sent: string, phiMode: PhiMode, field: string): boolean {
  const prefix = PSEUDONYM_PREFIX[kind];
  const isHandle = sent.startsWith(prefix);
  const name = ADDRESSED[kind];
  if (phiMode === 'no_phi' && !isHandle) {
    throw new PlatformError(
      'PLATFORM_INVALID_INPUT',
      `In a no_phi session ${name} is addressed by its ${prefix} handle (the id a no_phi list gives); ${sent} is not one.`,
      { field },
    );
  }
  if (phiMode === 'phi' && isHandle) {
    throw new PlatformError(
      'PLATFORM_INVALID_INPUT',
      `${sent} is a no_phi handle; a phi session addresses ${name} by its id (the id a phi list gives).`,
      { field },
    );
  }
  return isHandle;
}

/** Kinds whose real ids never start with their handle's prefix, so that a session sending the other mode's is told. */
const TOLD_APART: ReadonlySet<PseudonymKind> = new Set(['physician_order']);

/**
 * Whether a value sent where the contract marks a handle (x-svc-phi handle on a request value) is one to resolve: in a
 * no_phi session always, so that a real id is refused as a handle that does not resolve; in a phi session never. A kind
 * told apart by its prefix is refused clearly in the other mode instead (isAddressedByHandle).
 */
export function isSentAsHandle(kind: PseudonymKind, sent: string, phiMode: PhiMode, field: string): boolean {
  if (TOLD_APART.has(kind)) return isAddressedByHandle(kind, sent, phiMode, field);
  return phiMode === 'no_phi';
}
