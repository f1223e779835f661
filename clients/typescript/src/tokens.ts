import { unwrap, type ExtensionApiError } from './errors.js';
import type { Authorizer } from './retries.js';
import type { Client } from 'openapi-fetch';
import type { components, paths } from './generated/schema.js';

export type PhiMode = 'phi' | 'no_phi';
export type TokenResponse = components['schemas']['TokenResponse'];

export interface Credentials {
  clientId: string;
  clientSecret: string;
  /** The agency the token is for (default: the integration's own agency). */
  agencyId?: string;
  phiMode: PhiMode;
  /** Space-separated subset of the granted scopes (default: all granted). */
  scope?: string;
}

/**
 * Access tokens by client_credentials (`issueToken`): one token is shared until `renewBeforeSeconds` before its
 * `expires_in` runs out, then the next call fetches a new one; callers waiting meanwhile share that one request.
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

  async authorize(request: Request): Promise<void> {
    request.headers.set('authorization', `Bearer ${await this.accessToken()}`);
  }

  /** An expired token (this clock behind the server's, or a token held past its life) is replaced and the call sent again. */
  renews(error: ExtensionApiError): boolean {
    if (error.code !== 'PLATFORM_TOKEN_EXPIRED') return false;
    this.invalidate();
    return true;
  }

  private async fetch(): Promise<TokenResponse> {
    const { clientId, clientSecret, agencyId, phiMode, scope } = this.credentials;
    const requestedAt = this.now();
    const body = {
      grant_type: 'client_credentials' as const,
      client_id: clientId,
      client_secret: clientSecret,
      phi_mode: phiMode,
      agency_id: agencyId,
      scope,
    };
    const token = unwrap(await this.client.POST('/api/v1/oauth/token', { body }));
    // Renew early, but never so early that a short-lived token is fetched again at every call.
    const margin = Math.min(this.renewBeforeSeconds, token.expires_in / 2);
    this.current = { token, renewAt: requestedAt + (token.expires_in - margin) * 1000 };
    return token;
  }
}
