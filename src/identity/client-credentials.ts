import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { components } from '../generated/openapi.js';
import type { PhiMode } from '../shared/principal.js';
import { RequestError, type ValidationIssue } from '../shared/request-error.js';
import { PHI_MODES } from './grants.js';
import { dummySecretHash, secretLookupId, verifySecret } from './secrets.js';
import type { TokenFailureLimiter } from './token-failures.js';
import type { TokenSigner } from './tokens.js';
import { isStorableText } from '../domain/storable-text.js';
import { PlatformError } from '../shared/platform-error.js';
import {
  AssertionRefused,
  CLIENT_ASSERTION_TYPE,
  claimedClientId,
  type ClientAssertions,
} from './client-assertions.js';

export type TokenRequest = components['schemas']['TokenRequest'];

interface TokenGrantInput {
  body: TokenRequest;
  authorization: string | undefined;
  remoteAddress: string;
}

interface IssuedToken {
  accessToken: string;
  expiresIn: number;
  /** Space-separated. */
  scope: string;
  agencyId: string;
  extensionId: string;
  phiMode: PhiMode;
}

interface PresentedCredentials {
  clientId?: string;
  clientSecret?: string;
  /** A signed JWT instead of a secret (private_key_jwt); clientId is then the one it claims. */
  assertion?: string;
}

interface AuthenticatedClient {
  clientId: string;
  agencyId: string;
  extensionId: string;
  scopes: string[];
  phiModes: string[];
}

/** The capability that entitles an integration to tokens at all (x-svc-capability of issueToken). */
const TOKEN_CAPABILITY = 'oauth.token';

const authenticatedClient = (row: {
  client_id: string;
  agency_id: string;
  extension_id: string;
  scopes: string[];
  phi_modes: string[];
}): AuthenticatedClient => ({
  clientId: row.client_id,
  agencyId: row.agency_id,
  extensionId: row.extension_id,
  scopes: row.scopes,
  phiModes: row.phi_modes,
});

const entitled = (row: { status: string; agency_status: string; capabilities: string[] }) =>
  row.status === 'active' && row.agency_status === 'active' && row.capabilities.includes(TOKEN_CAPABILITY);

function invalidRequest(issue: Omit<ValidationIssue, 'location'>, message: string): RequestError {
  return new RequestError(400, 'invalid_request', 'PLATFORM_INVALID_REQUEST', message, {
    issues: [{ location: 'body', ...issue }],
  });
}

const INVALID_CLIENT_HEADERS = { 'www-authenticate': 'Basic realm="extension-api"' };

/**
 * One refusal for an unknown client, a bad or expired secret or assertion, another agency, a disabled integration
 * or agency, and a missing entitlement, so a caller cannot tell them apart: same status, body and headers.
 */
function invalidClient(): RequestError {
  return new RequestError(401, 'invalid_client', 'PLATFORM_INVALID_CREDENTIAL', 'Client authentication failed.', {
    nextStep: 'Check client_id, client_secret and agency_id, and that the integration is enabled for the agency.',
    headers: INVALID_CLIENT_HEADERS,
  });
}

/** The same invalid_client, with the code of a fault in the assertion's own text (see AssertionRefused). */
function invalidAssertion(refusal: AssertionRefused): RequestError {
  return new RequestError(401, 'invalid_client', refusal.code, 'Client authentication failed.', {
    nextStep: refusal.nextStep,
    headers: INVALID_CLIENT_HEADERS,
    ...(refusal.details ? { details: refusal.details } : {}),
  });
}

function requestedPhiMode(phiMode: string | undefined): PhiMode {
  if (phiMode === undefined || phiMode === '') {
    const message = 'phi_mode is required: send no_phi, or phi when the integration is permitted PHI.';
    throw new RequestError(400, 'invalid_request', 'PLATFORM_PHI_MODE_REQUIRED', message, {
      issues: [
        { location: 'body', path: '/phi_mode', message: 'property "phi_mode" is required', keyword: 'required' },
      ],
    });
  }
  if (!PHI_MODES.includes(phiMode as PhiMode)) {
    throw invalidRequest(
      { path: '/phi_mode', message: 'must be no_phi or phi', keyword: 'enum' },
      'phi_mode must be no_phi or phi.',
    );
  }
  return phiMode as PhiMode;
}

// RFC 6749 2.3.1: id and secret are form-url-encoded, then joined by ":" and base64-encoded.
const BASIC = /^basic +([A-Za-z0-9+/]+=*) *$/i;
const formDecode = (value: string) => decodeURIComponent(value.replace(/\+/g, ' '));

function basicCredentials(authorization: string): PresentedCredentials {
  const match = BASIC.exec(authorization);
  const decoded = match ? Buffer.from(match[1], 'base64').toString('utf8') : '';
  const colon = decoded.indexOf(':');
  if (colon < 0) return {};
  try {
    const clientId = formDecode(decoded.slice(0, colon));
    // No client's id holds text the database cannot store (a NUL): a failed authentication, not a failed query.
    return isStorableText(clientId) ? { clientId, clientSecret: formDecode(decoded.slice(colon + 1)) } : {};
  } catch {
    return {}; // malformed percent-encoding: a failed authentication like any other
  }
}

const ONE_METHOD =
  'Authenticate the client one way: HTTP Basic, client_id and client_secret in the body, or a client_assertion.';

/** A client_assertion (RFC 7521 4.2) with its type, never beside a secret or HTTP Basic. */
function assertionCredentials(body: TokenRequest, authorization: string | undefined): PresentedCredentials {
  if (body.client_assertion_type !== CLIENT_ASSERTION_TYPE) {
    const message = `must be ${CLIENT_ASSERTION_TYPE}`;
    throw invalidRequest(
      { path: '/client_assertion_type', message, keyword: 'const' },
      `client_assertion_type ${message}.`,
    );
  }
  if (body.client_assertion === undefined) {
    throw invalidRequest(
      {
        path: '/client_assertion',
        message: 'property "client_assertion" is required with client_assertion_type',
        keyword: 'required',
      },
      'client_assertion_type was sent without client_assertion.',
    );
  }
  if (authorization !== undefined || body.client_secret !== undefined) {
    throw invalidRequest(
      { path: '/client_assertion', message: 'a client secret was also sent', keyword: 'clientAuthentication' },
      ONE_METHOD,
    );
  }
  return { clientId: body.client_id ?? claimedClientId(body.client_assertion), assertion: body.client_assertion };
}

/** HTTP Basic, client_id/client_secret in the body, or a client assertion; never two (RFC 6749 2.3). */
function presentedCredentials(body: TokenRequest, authorization: string | undefined): PresentedCredentials {
  if (body.client_assertion_type !== undefined || body.client_assertion !== undefined)
    return assertionCredentials(body, authorization);
  if (authorization === undefined) return { clientId: body.client_id, clientSecret: body.client_secret };
  if (body.client_id !== undefined || body.client_secret !== undefined) {
    throw invalidRequest(
      {
        path: '/client_secret',
        message: 'client credentials were also sent by HTTP Basic',
        keyword: 'clientAuthentication',
      },
      'Send the client credentials either by HTTP Basic or as client_id and client_secret in the body, not both.',
    );
  }
  return basicCredentials(authorization);
}

/** The requested scopes, which must all be granted; none requested means all granted. Never widens access. */
function narrowScopes(requested: string | undefined, granted: readonly string[]): string[] {
  const asked = [...new Set((requested ?? '').split(' ').filter(Boolean))];
  if (asked.length === 0) return [...granted];
  const notGranted = asked.filter((scope) => !granted.includes(scope));
  if (notGranted.length > 0) {
    throw new RequestError(
      400,
      'invalid_scope',
      'PLATFORM_INVALID_REQUEST',
      `Scopes not granted to this integration: ${notGranted.join(' ')}.`,
      {
        nextStep: 'Ask for a subset of the granted scopes, or omit scope to get all of them.',
        details: { not_granted: notGranted },
      },
    );
  }
  return asked;
}

/** Told of each token issued and each refusal, by its error code (the metrics). */
interface TokenOutcomes {
  issued(phiMode: PhiMode): void;
  refused(code: string): void;
}

/** The token endpoint's client_credentials grant (`issueToken`, RFC 6749 4.4). */
export class ClientCredentialsGrant {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly signer: TokenSigner,
    private readonly failures: TokenFailureLimiter,
    private readonly assertions: ClientAssertions,
    private readonly outcomes?: TokenOutcomes,
  ) {}

  async issue(input: TokenGrantInput): Promise<IssuedToken> {
    if (!this.outcomes) return this.grant(input);
    try {
      const issued = await this.grant(input);
      this.outcomes.issued(issued.phiMode);
      return issued;
    } catch (err) {
      this.outcomes.refused(
        err instanceof RequestError || err instanceof PlatformError ? err.code : 'PLATFORM_INTERNAL_ERROR',
      );
      throw err;
    }
  }

  private async grant(input: TokenGrantInput): Promise<IssuedToken> {
    const phiMode = requestedPhiMode(input.body.phi_mode);
    const credentials = presentedCredentials(input.body, input.authorization);
    const admission = await this.failures.admit({ subject: credentials.clientId, remoteAddress: input.remoteAddress });
    // Without agency_id the token is for the integration's own agency (stock OAuth clients send fixed parameters only).
    const agencyId = input.body.agency_id || undefined;
    let client: AuthenticatedClient | undefined;
    try {
      client =
        credentials.assertion === undefined
          ? await this.authenticate(credentials, agencyId, admission.subjectLimited)
          : await this.authenticateAssertion(credentials.assertion, input.body.client_id, agencyId);
    } catch (err) {
      if (!(err instanceof AssertionRefused)) throw err;
      throw (await this.failures.recordFailure(admission)) ?? invalidAssertion(err);
    }
    if (!client) throw (await this.failures.recordFailure(admission)) ?? invalidClient();
    if (!client.phiModes.includes(phiMode)) {
      // RFC 6749 5.2 invalid_scope: the session asked for more access than the integration was granted.
      throw new RequestError(
        403,
        'invalid_scope',
        'PLATFORM_PHI_MODE_DENIED',
        `This integration may not use phi_mode ${phiMode}.`,
        {
          nextStep:
            'Ask for phi_mode no_phi, or have an agency administrator permit the PHI mode for this integration.',
          details: { phi_mode: phiMode },
        },
      );
    }
    const scopes = narrowScopes(input.body.scope, client.scopes);
    const { accessToken, expiresIn } = await this.signer.sign({ ...client, phiMode, scopes });
    return {
      accessToken,
      expiresIn,
      scope: scopes.join(' '),
      agencyId: client.agencyId,
      extensionId: client.extensionId,
      phiMode,
    };
  }

  /**
   * Exactly one scrypt verification whatever is wrong, so timing does not tell an unknown client from a bad secret.
   * Once the client id is over its failure limit, none unless the secret names a stored hash of an entitled client:
   * every failure then costs the same (no hash), and guessers spread over many addresses cannot spend the CPU.
   */
  private async authenticate(
    { clientId, clientSecret = '' }: PresentedCredentials,
    agencyId: string | undefined,
    clientLimited: boolean,
  ): Promise<AuthenticatedClient | undefined> {
    const row = clientId === undefined ? undefined : await this.lookup(clientId, clientSecret);
    const acceptable =
      Boolean(row?.secret_hash) &&
      (agencyId === undefined || row?.agency_id === agencyId) &&
      row !== undefined &&
      entitled(row);
    if (clientLimited && !acceptable) return undefined;
    const valid = await verifySecret(clientSecret, row?.secret_hash ?? (await dummySecretHash()));
    if (!valid || !acceptable) return undefined;
    return authenticatedClient(row);
  }

  /**
   * No scrypt here, so no cost to even out: an assertion's signature check costs microseconds. Its jti is spent last,
   * once everything else holds, so a refused request never uses up an assertion id.
   */
  private async authenticateAssertion(
    assertion: string,
    clientId: string | undefined,
    agencyId: string | undefined,
  ): Promise<AuthenticatedClient | undefined> {
    const verified = await this.assertions.verify(assertion, clientId);
    if (!verified) return undefined;
    const row = await this.clientQuery(verified.clientId).executeTakeFirst();
    if (
      !row ||
      !entitled(row) ||
      row.agency_id !== verified.agencyId ||
      (agencyId !== undefined && agencyId !== row.agency_id)
    )
      return undefined;
    if (!(await this.assertions.spend(verified))) return undefined;
    return authenticatedClient(row);
  }

  private clientQuery(clientId: string) {
    return this.db
      .selectFrom('client_credentials as c')
      .innerJoin('extensions as e', (join) =>
        join.onRef('e.agency_id', '=', 'c.agency_id').onRef('e.id', '=', 'c.extension_id'),
      )
      .innerJoin('agencies as a', 'a.id', 'c.agency_id')
      .select([
        'c.client_id',
        'c.agency_id',
        'c.extension_id',
        'e.status',
        'a.status as agency_status',
        'e.scopes',
        'e.capabilities',
        'e.phi_modes',
      ])
      .where('c.client_id', '=', clientId);
  }

  private lookup(clientId: string, clientSecret: string) {
    return this.clientQuery(clientId)
      .leftJoin('client_secrets as s', (join) =>
        join
          .onRef('s.agency_id', '=', 'c.agency_id')
          .onRef('s.client_id', '=', 'c.client_id')
          .on('s.id', '=', secretLookupId(clientSecret))
          .on((eb) => eb.or([eb('s.expires_at', 'is', null), eb('s.expires_at', '>', sql<Date>`now()`)])),
      )
      .select('s.secret_hash')
      .executeTakeFirst();
  }
}
