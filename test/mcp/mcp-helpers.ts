import { createServer } from 'node:net';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Logger } from 'pino';
import { buildTestApp, type TestApi } from '../helpers/app.js';
import type { Teardown } from '../helpers/database.js';

/** A free loopback port: the issuer (and so the MCP resource URL) must be known before the app is built. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** The app listening on loopback, its issuer the address it listens on. */
export async function listeningApp(t: Teardown, logger?: Logger): Promise<{ api: TestApi; base: string }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const api = await buildTestApp({ tokenIssuer: base, tokenAudience: `${base}/api/v1/ext` }, t, logger);
  await api.app.listen({ port, host: '127.0.0.1' });
  return { api, base };
}

/** The SDK's client side of OAuth, kept in memory; the authorization URL it would open is handed to the test's browser. */
export class TestOAuthClient implements OAuthClientProvider {
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;

  constructor(
    private readonly clientId: string,
    readonly redirectUrl: string,
  ) {}

  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'Test assistant', redirect_uris: [this.redirectUrl], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] };
  }

  clientInformation(): OAuthClientInformationMixed {
    return { client_id: this.clientId, redirect_uris: [this.redirectUrl] };
  }

  tokens() {
    return this.saved;
  }

  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }

  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }

  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }

  codeVerifier() {
    return this.verifier;
  }
}
