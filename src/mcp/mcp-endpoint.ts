import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type Provider from 'oidc-provider';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { DB } from '../db/schema.js';
import type { Gateway } from '../gateway/core/gateway.js';
import {
  REQUIRED_MCP_SCOPES,
  verifyMcpAccessToken,
  type McpAccess,
} from '../identity/mcp-authorization/authorization-server.js';
import { toolPrincipal } from '../identity/mcp-authorization/people-extension.js';
import { RequestError } from '../shared/request-error.js';
import { registerReadTools } from './tools.js';
import { registerProposalTools } from './proposal-tools.js';
import { handOver } from './hand-over.js';

export const MCP_PATH = '/api/v1/mcp';
export const PROTECTED_RESOURCE_METADATA_PATH = `/.well-known/oauth-protected-resource${MCP_PATH}`;

interface McpEndpointSettings {
  /** The absolute URL of the endpoint: the resource tokens must be bound to. */
  resource: string;
  /** Where its RFC 9728 metadata is, named in every 401. */
  resourceMetadataUrl: string;
  /** The only Origin a browser may call from (the issuer's); calls without one (assistants, not pages) pass. */
  allowedOrigin: string;
  version: string;
}

const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** Without an error the challenge names no scope: a client then asks for the metadata's scopes_supported (with offline_access). */
function challenge(settings: McpEndpointSettings, error?: string, description?: string): string {
  const parts = [`resource_metadata="${settings.resourceMetadataUrl}"`];
  if (error) parts.push(`error="${error}"`, `error_description="${description}"`);
  if (error === 'insufficient_scope') parts.push(`scope="${REQUIRED_MCP_SCOPES.join(' ')}"`);
  return `Bearer ${parts.join(', ')}`;
}

/** RFC 6750 3 and RFC 9728 5.1: a 401 names the resource metadata, so that a client finds where to get a token. */
async function authenticate(
  request: FastifyRequest,
  provider: Provider,
  db: Kysely<DB>,
  settings: McpEndpointSettings,
): Promise<McpAccess> {
  const match = BEARER.exec(request.headers.authorization ?? '');
  if (!match) {
    throw new RequestError(
      401,
      'invalid_token',
      'PLATFORM_AUTHENTICATION_REQUIRED',
      'Send "Authorization: Bearer <access token>" from the authorization server named in the resource metadata.',
      {
        headers: { 'www-authenticate': challenge(settings) },
      },
    );
  }
  const access = await verifyMcpAccessToken(provider, db, match[1], settings.resource);
  if (!access) {
    const description =
      'The access token is not valid for this resource (unknown, expired, revoked, or for another resource).';
    throw new RequestError(401, 'invalid_token', 'PLATFORM_INVALID_CREDENTIAL', description, {
      headers: { 'www-authenticate': challenge(settings, 'invalid_token', description) },
    });
  }
  const missing = REQUIRED_MCP_SCOPES.filter((scope) => !access.scopes.has(scope));
  if (missing.length > 0) {
    const description = `The token lacks the scopes ${missing.join(' and ')}.`;
    throw new RequestError(403, 'insufficient_scope', 'PLATFORM_SCOPE_NOT_GRANTED', description, {
      headers: { 'www-authenticate': challenge(settings, 'insufficient_scope', description) },
    });
  }
  return access;
}

function checkOrigin(request: FastifyRequest, settings: McpEndpointSettings) {
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== settings.allowedOrigin) {
    throw new RequestError(
      403,
      'forbidden',
      'PLATFORM_ACCESS_DENIED',
      `Calls from the origin ${origin} are not accepted.`,
    );
  }
}

/**
 * One MCP server per request (the stateless mode of streamable HTTP: no session, JSON answers), whose tools run as the
 * token's user through the gateway. Fastify hands the raw request to the SDK's transport.
 */
async function serve(
  request: FastifyRequest,
  reply: FastifyReply,
  access: McpAccess,
  gateway: Gateway,
  db: Kysely<DB>,
  settings: McpEndpointSettings,
) {
  const server = new McpServer(
    { name: 'braes-agency-operations', version: settings.version },
    { capabilities: { tools: {} } },
  );
  registerReadTools(server, { gateway, principal: toolPrincipal(access) });
  registerProposalTools(server, db, access);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  handOver(request, reply);
  reply.raw.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  const auth = {
    token: access.tokenId,
    clientId: access.clientId,
    scopes: [...access.scopes],
    expiresAt: Math.floor(access.expiresAt.getTime() / 1000),
  };
  await transport.handleRequest(Object.assign(request.raw, { auth }), reply.raw, request.body);
}

export function registerMcpEndpoint(
  app: FastifyInstance,
  provider: Provider,
  db: Kysely<DB>,
  gateway: Gateway,
  settings: McpEndpointSettings,
) {
  app.post(MCP_PATH, async (request, reply) => {
    checkOrigin(request, settings);
    const access = await authenticate(request, provider, db, settings);
    await serve(request, reply, access, gateway, db, settings);
  });
  // Stateless: no server-initiated stream to open (GET) and no session to end (DELETE).
  app.route({
    method: ['GET', 'DELETE'],
    url: MCP_PATH,
    handler: async (request) => {
      checkOrigin(request, settings);
      await authenticate(request, provider, db, settings);
      throw new RequestError(
        405,
        'method_not_allowed',
        'PLATFORM_INVALID_REQUEST',
        'This MCP endpoint is stateless: send JSON-RPC messages with POST.',
        { headers: { allow: 'POST' } },
      );
    },
  });
}
