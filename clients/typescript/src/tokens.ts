import { CLIENT_ASSERTION_TYPE, clientAssertion, signingKey, type AssertionKey } from './assertion.js';
import { unwrap, type ExtensionApiError } from './errors.js';
import type { Authorizer } from './retries.js';
import type { Client } from 'openapi-fetch';
import type { components, paths } from './generated/schema.js';

export type PhiMode = 'phi' | 'no_phi';
export type TokenResponse = components['schemas']['TokenResponse'];

export const TOKEN_PATH = '/api/v1/oauth/token';

interface TokenParameters {
  clientId: string;
  /** The agency the token is for (default: the integration's own agency). */
  agencyId?: string;
  phiMode: PhiMode;
  /** Space-separated subset of the granted scopes (default: all granted). */
  scope?: string;
}

export interface SecretCredentials extends TokenParameters {
  clientSecret: string;
}

/** private_key_jwt: each token request carries an assertion signed with this key instead of a secret. */
export interface KeyCredentials extends TokenParameters, AssertionKey {}

export type Credentials = SecretCredentials | KeyCredentials;

/**
 * How the client proves who it is, set in the body of each attempt of a token request: with a key, each attempt is
 * signed anew, since the service accepts a jti once and a retry after a lost answer would otherwise be refused.
 */
export class ClientProof implements Authorizer {
  /** The proof's members of a token request body. */
  readonly fields: () => Record<string, string>;

  /** `tokenUrl` is the token endpoint's URL the client posts to: an assertion's aud. Throws for an unusable key. */
  constructor(credentials: Credentials, tokenUrl: string) {
    const { clientId } = credentials;
    if ('clientSecret' in credentials) {
      const { clientSecret } = credentials;
      this.fields = () => ({ client_id: clientId, client_secret: clientSecret });
      return;
    }
    const signer = signingKey(credentials);
    // Signed by the wall clock, not the clock tokens are timed by: the service checks exp against its own.
    this.fields = () => ({
      client_assertion_type: CLIENT_ASSERTION_TYPE,
      client_assertion: clientAssertion(clientId, tokenUrl, signer),
    });
  }

  async authorize(request: Request): Promise<Request> {
    const body = { ...((await request.json()) as object), ...this.fields() };
    return new Request(request, { body: JSON.stringify(body) });
  }

  renews(): boolean {
    return false;
  }
}

/**
 * Access tokens by client_credentials (`issueToken`), from a `client` that sets the ClientProof in each token request:
 * one token is shared until `renewBeforeSeconds` before its `expires_in` runs out, then the next call fetches a new
 * one; callers waiting meanwhile share that one request.
 */
export class TokenSource implements Authorizer {
  private current: { token: TokenResponse; renewAt: number } | undefined;
  private pending: Promise<TokenResponse> | undefined;

  constructor(
    private readonly client: Client<paths>,
    private readonly credentials: Credentials,
    private readonly renewBeforeSeconds = 60,
    private readonly now: () => number = Date.now,
  ) {}

  /** A valid access token, fetched when none is held or the held one is near its expiry. */
  async accessToken(): Promise<string> {
    return (await this.token()).access_token;
  }

  /** The token endpoint's whole answer for the held token (its scope, expires_in, phi_mode...). */
  async token(): Promise<TokenResponse> {
    if (this.current && this.now() < this.current.renewAt) return this.current.token;
    this.pending ??= this.fetch().finally(() => (this.pending = undefined));
    return this.pending;
  }

  /** Forgets the held token, so that the next call fetches one. */
  invalidate(): void {
    this.current = undefined;
  }

  async authorize(request: Request): Promise<Request> {
    request.headers.set('authorization', `Bearer ${await this.accessToken()}`);
    return request;
  }

  /** An expired token (this clock behind the server's, or a token held past its life) is replaced and the call sent again. */
  renews(error: ExtensionApiError): boolean {
    if (error.code !== 'PLATFORM_TOKEN_EXPIRED') return false;
    this.invalidate();
    return true;
  }

  private async fetch(): Promise<TokenResponse> {
    const { agencyId, phiMode, scope } = this.credentials;
    const requestedAt = this.now();
    const body = {
      grant_type: 'client_credentials' as const,
      phi_mode: phiMode,
      agency_id: agencyId,
      scope,
    };
    const token = unwrap(await this.client.POST(TOKEN_PATH, { body }));
    // Renew early, but never so early that a short-lived token is fetched again at every call.
    const margin = Math.min(this.renewBeforeSeconds, token.expires_in / 2);
    this.current = { token, renewAt: requestedAt + (token.expires_in - margin) * 1000 };
    return token;
  }
}
