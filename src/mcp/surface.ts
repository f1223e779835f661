import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { DB } from '../db/schema.js';
import type { Gateway } from '../gateway/core/gateway.js';
import {
  createPeopleAuthorizationServer,
  MCP_SCOPES,
  REQUIRED_MCP_SCOPES,
} from '../identity/mcp-authorization/authorization-server.js';
import type { KeyEncryption } from '../identity/key-encryption.js';
import { serviceVersion } from '../project-files.js';
import type { GrantHandover } from '../resources/oauth/token-handler.js';
import { peopleGrantHandover, registerPeopleAuthorization } from './authorization-routes.js';
import type { CatalogMcpSurface } from '../catalog/catalog.js';
import { READ_TOOL_DESCRIPTIONS } from './tools.js';
import { PROPOSAL_TOOL_DESCRIPTIONS } from './proposal-tools.js';
import { MCP_PATH, PROTECTED_RESOURCE_METADATA_PATH, registerMcpEndpoint } from './mcp-endpoint.js';

/** A refresh token (and its grant) lasts this long unless rotated on; each refresh hands out a new one. */
const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;

interface McpSurface {
  /** The token route's grants the surface's authorization server answers (before the operations are registered). */
  grantHandovers: Record<string, GrantHandover>;
  /** The authorization pages and routes, the MCP endpoint and its RFC 9728 metadata. */
  register(app: FastifyInstance, gateway: Gateway): void;
  /** How the catalog describes it. */
  catalog: CatalogMcpSurface;
}

/** The MCP surface for people: its authorization server on our database and its endpoint at /api/v1/mcp. */
export async function createMcpSurface(
  config: Config,
  db: Kysely<DB>,
  keyEncryption: KeyEncryption,
): Promise<McpSurface> {
  const issuer = config.tokenIssuer;
  const resource = `${issuer}${MCP_PATH}`;
  const provider = await createPeopleAuthorizationServer(db, keyEncryption, {
    issuer,
    mcpResource: resource,
    accessTokenTtlSeconds: config.tokenTtlSeconds,
    refreshTokenTtlSeconds: REFRESH_TOKEN_TTL_SECONDS,
  });
  if (config.trustProxy) provider.proxy = true;
  const resourceMetadata = {
    resource,
    authorization_servers: [issuer],
    scopes_supported: [...MCP_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'Agency operations (de-identified, read-only, proposals for human review)',
  };
  return {
    catalog: {
      endpoint: resource,
      protected_resource_metadata: `${issuer}${PROTECTED_RESOURCE_METADATA_PATH}`,
      authorization_server_metadata: `${issuer}/.well-known/oauth-authorization-server`,
      scopes_required: [...REQUIRED_MCP_SCOPES],
      tools: [...READ_TOOL_DESCRIPTIONS, ...PROPOSAL_TOOL_DESCRIPTIONS],
    },
    grantHandovers: peopleGrantHandover(provider),
    register(app, gateway) {
      registerPeopleAuthorization(app, provider, db);
      app.get(PROTECTED_RESOURCE_METADATA_PATH, async (_request, reply) => {
        reply.header('cache-control', 'public, max-age=3600');
        return resourceMetadata;
      });
      registerMcpEndpoint(app, provider, db, gateway, {
        resource,
        resourceMetadataUrl: `${issuer}${PROTECTED_RESOURCE_METADATA_PATH}`,
        allowedOrigin: new URL(issuer).origin,
        version: serviceVersion,
      });
    },
  };
}
