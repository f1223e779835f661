import { generateKeyPairSync } from 'node:crypto';
import type { Kysely } from 'kysely';
import Provider, { errors, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import type { DB } from '../../db/schema.js';
import type { KeyEncryption } from '../key-encryption.js';
import { serviceSecret } from '../secrets-at-rest.js';
import { idHash, RecordAdapter } from './record-adapter.js';
import { findPerson, type Person } from './people.js';
import { escapeHtml, page } from './pages.js';

/** The MCP surface's scopes (README "MCP surface for people"), of which mcp:tools and no_phi are required. */
export const MCP_SCOPES = ['mcp:tools', 'platform:read', 'no_phi', 'offline_access'] as const;
export const REQUIRED_MCP_SCOPES = ['mcp:tools', 'no_phi'] as const;
/** The scopes an access token for the MCP endpoint carries (offline_access only asks for a refresh token). */
const RESOURCE_SCOPES = 'mcp:tools platform:read no_phi';

/** Paths of the authorization server: one issuer with the machine token endpoint, whose route hands it these grants. */
export const AUTHORIZATION_PATHS = {
  authorization: '/api/v1/oauth/authorize',
  token: '/api/v1/oauth/token',
  revocation: '/api/v1/oauth/revoke',
  interaction: '/api/v1/oauth/interaction',
} as const;

export const PEOPLE_GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;

interface PeopleAuthorizationSettings {
  /** TOKEN_ISSUER: the same issuer as the machine flow (one /.well-known/oauth-authorization-server serves both). */
  issuer: string;
  /** The absolute URL of the MCP endpoint: the only resource (RFC 8707) tokens are issued for, and their audience. */
  mcpResource: string;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
}

const COOKIE_KEY_PURPOSE = 'mcp-authorization-cookies';

/** RFC 8414 members of the authorization server's metadata that the MCP surface adds to the machine flow's. */
export function peopleAuthorizationMetadata(issuer: string) {
  return {
    authorization_endpoint: `${issuer}${AUTHORIZATION_PATHS.authorization}`,
    revocation_endpoint: `${issuer}${AUTHORIZATION_PATHS.revocation}`,
    grant_types_supported: [...PEOPLE_GRANT_TYPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    scopes_supported: [...MCP_SCOPES],
    authorization_response_iss_parameter_supported: true,
  };
}

/** A grant's scopes must hold the required ones; a client asking for less is refused rather than narrowed. */
export function missingRequiredScopes(requested: string): string[] {
  const scopes = new Set(requested.split(' '));
  return REQUIRED_MCP_SCOPES.filter((scope) => !scopes.has(scope));
}

/** Error pages of the authorization server: the error and its description, nothing of the request. */
function renderError(ctx: KoaContextWithOIDC, out: { error?: unknown; error_description?: unknown }) {
  ctx.type = 'html';
  ctx.body = page(
    'Sign-in problem',
    `<h1>Sign-in problem</h1><p><code>${escapeHtml(String(out.error))}</code></p><p>${escapeHtml(String(out.error_description ?? ''))}</p><p>Start again from your assistant.</p>`,
  );
}

function configuration(db: Kysely<DB>, settings: PeopleAuthorizationSettings, cookieKey: Buffer): Configuration {
  return {
    adapter: (name: string) => new RecordAdapter(db, name),
    clients: [],
    // No ID tokens are offered (openid is not a scope of this surface), so this key signs nothing anyone verifies;
    // it is given so that oidc-provider does not fall back to its published development keys.
    jwks: { keys: [generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }) as never] },
    cookies: { keys: [cookieKey.toString('base64url')] },
    scopes: [...MCP_SCOPES],
    claims: { openid: ['sub'] },
    responseTypes: ['code'],
    // The signing key above is EC.
    clientDefaults: {
      id_token_signed_response_alg: 'ES256',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    },
    pkce: { required: () => true },
    routes: {
      authorization: AUTHORIZATION_PATHS.authorization,
      token: AUTHORIZATION_PATHS.token,
      revocation: AUTHORIZATION_PATHS.revocation,
    },
    interactions: { url: (_ctx, interaction) => `${AUTHORIZATION_PATHS.interaction}/${interaction.uid}` },
    findAccount: async (_ctx, sub) => {
      const person = await findPerson(db, sub);
      return person && { accountId: person.id, claims: () => ({ sub: person.id }) };
    },
    features: {
      devInteractions: { enabled: false },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        // A client that names no resource still gets a token bound to the MCP endpoint, never an unbound one.
        defaultResource: () => settings.mcpResource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => {
          if (resource !== settings.mcpResource)
            throw new errors.InvalidTarget(`the only resource is ${settings.mcpResource}`);
          return {
            scope: RESOURCE_SCOPES,
            audience: settings.mcpResource,
            accessTokenTTL: settings.accessTokenTtlSeconds,
            accessTokenFormat: 'opaque',
          };
        },
      },
    },
    // Every refresh hands out a new refresh token; presenting a replaced one revokes the grant's every token.
    rotateRefreshToken: true,
    ttl: {
      AccessToken: settings.accessTokenTtlSeconds,
      AuthorizationCode: 60,
      RefreshToken: settings.refreshTokenTtlSeconds,
      Grant: settings.refreshTokenTtlSeconds,
      Interaction: 600,
      Session: 8 * 3600,
    },
    renderError,
  };
}

/** The authorization server of the MCP surface (oidc-provider), on our database; its cookie key is a sealed service secret. */
export async function createPeopleAuthorizationServer(
  db: Kysely<DB>,
  keyEncryption: KeyEncryption,
  settings: PeopleAuthorizationSettings,
): Promise<Provider> {
  const cookieKey = await serviceSecret(db, keyEncryption, COOKIE_KEY_PURPOSE);
  const provider = new Provider(settings.issuer, configuration(db, settings, cookieKey));
  provider.use(offlineAccessAsksConsent);
  return provider;
}

/**
 * oidc-provider follows OpenID Connect: `offline_access` is dropped, and no refresh token issued, unless the request
 * also sends `prompt=consent`. On this OAuth surface asking for `offline_access` is enough: the prompt is added, so
 * the person is shown the consent page (which names "stay connected") every time an assistant asks for it.
 */
async function offlineAccessAsksConsent(ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> {
  const { scope, prompt } = ctx.query;
  if (
    ctx.path === AUTHORIZATION_PATHS.authorization &&
    typeof scope === 'string' &&
    scope.split(' ').includes('offline_access') &&
    prompt === undefined
  ) {
    ctx.query = { ...ctx.query, prompt: 'consent' };
  }
  await next();
}

/** What a valid access token of the MCP endpoint says about its caller. */
export interface McpAccess {
  person: Person;
  clientId: string;
  scopes: ReadonlySet<string>;
  /** Not the token: a digest that names it in audit and metering records. */
  tokenId: string;
  issuedAt: Date;
  expiresAt: Date;
}

/**
 * The caller of an access token for `resource`, or undefined when the token is unknown, expired, revoked (its
 * grant's family revoked), bound to another resource, or its user or agency disabled.
 */
export async function verifyMcpAccessToken(
  provider: Provider,
  db: Kysely<DB>,
  token: string,
  resource: string,
): Promise<McpAccess | undefined> {
  const found = await provider.AccessToken.find(token);
  if (!found || found.isExpired || found.aud !== resource || !found.accountId) return undefined;
  // Revoking deletes the grant, so checking it refuses the tokens that an exchange racing the revocation saved after it;
  // oidc-provider's refresh checks the grant the same way (validateGrant).
  if (!(await provider.Grant.find(found.grantId!))) return undefined;
  const person = await findPerson(db, found.accountId);
  if (!person) return undefined;
  return {
    person,
    clientId: found.clientId!,
    scopes: new Set(found.scope?.split(' ').filter(Boolean)),
    tokenId: `mcp_${idHash(token).slice(0, 22)}`,
    issuedAt: new Date(found.iat! * 1000),
    expiresAt: new Date(found.exp! * 1000),
  };
}
