import { Client, type ClientOptions } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { FormBrowser, formAction } from './browser.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Logger } from 'pino';
import type { Config } from '../../src/config.js';
import { buildTestApp, type TestApi } from '../helpers/app.js';
import type { Teardown } from '../helpers/database.js';
import { freePort } from '../helpers/ports.js';
import type { Kysely } from 'kysely';
import type { CreatedUser } from '../../src/admin/user.js';
import type { DB } from '../../src/db/schema.js';
import { changePassword } from '../../src/identity/mcp-authorization/people.js';

/** The app listening on loopback, its issuer the address it listens on. */
export async function listeningApp(
  t: Teardown,
  logger?: Logger,
  config: Partial<Config> = {},
): Promise<{ api: TestApi; base: string }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const api = await buildTestApp({ tokenIssuer: base, tokenAudience: `${base}/api/v1/ext`, ...config }, t, logger);
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
    return {
      client_name: 'Test assistant',
      redirect_uris: [this.redirectUrl],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    };
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

/** Who signs in; `newPassword` is chosen on the first sign-in's page when it comes (a password `user create` handed over). */
export interface SigningInPerson {
  email: string;
  password: string;
  newPassword?: string;
}

/** The user's part of the flow, as a browser posting the login and consent forms; the pages seen and the code the redirect URI gets. */
export async function authorizeInBrowser(
  base: string,
  authorizationUrl: URL,
  redirectUri: string,
  person: SigningInPerson,
) {
  const isCallback = (url: string) => url.startsWith(redirectUri);
  const browser = new FormBrowser();
  const login = await browser.follow(authorizationUrl.href, isCallback);
  const credentials = { email: person.email, password: person.password };
  let consent = await browser.post(formAction(login.body, base), credentials, isCallback);
  if (person.newPassword !== undefined && formAction(consent.body, base).endsWith('/password')) {
    consent = await browser.post(
      formAction(consent.body, base),
      { ...credentials, new_password: person.newPassword, confirm_password: person.newPassword },
      isCallback,
    );
  }
  const done = await browser.post(formAction(consent.body, base), { decision: 'allow' }, isCallback);
  const callback = new URL(done.location!);
  return { browser, login, consent, callback, code: callback.searchParams.get('code')! };
}

/** An MCP client of the SDK signed in as `person` through the whole authorization code flow. */
export async function connectedClient(
  base: string,
  clientId: string,
  redirectUri: string,
  person: SigningInPerson,
  options?: ClientOptions,
) {
  const mcpUrl = new URL(`${base}/api/v1/mcp`);
  const oauth = new TestOAuthClient(clientId, redirectUri);
  const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: oauth });
  await new Client({ name: 'test', version: '1' }).connect(transport).catch((err: Error) => {
    if (!/Unauthorized/.test(err.message)) throw err;
  });
  const authorization = await authorizeInBrowser(base, oauth.authorizationUrl!, redirectUri, person);
  await transport.finishAuth(authorization.code);
  const client = new Client({ name: 'test', version: '1' }, options);
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: oauth }));
  // The listing gives the client the tools' output schemas: from then on callTool validates every structured result.
  await client.listTools();
  return { client, oauth, authorization };
}

/** A tool error's refusal (status, code, message, next step, issues): the JSON line after its text's first line. */
export function refusalOf(result: CallToolResult): Record<string, unknown> {
  const text = result.content.find((part) => part.type === 'text')?.text ?? '';
  return JSON.parse(text.slice(text.indexOf('\n') + 1)) as Record<string, unknown>;
}

/**
 * A person past their first sign-in: the password an administrator handed over (`user create`) is replaced by their
 * own, as the sign-in page makes them do (test/mcp/password-change.test.ts walks that page).
 */
export async function withOwnPassword(db: Kysely<DB>, user: CreatedUser): Promise<{ email: string; password: string }> {
  const password = `${user.initialPassword}-own`;
  await changePassword(db, user.userId, password);
  return { email: user.email, password };
}
