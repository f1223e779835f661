import type { FastifyInstance } from 'fastify';
import { operations } from '../generated/contract.js';
import { CONTRACT_SCOPES } from './grants.js';
import { peopleAuthorizationMetadata } from './mcp-authorization/authorization-server.js';
import type { KeyRing } from './signing-keys.js';

const JWKS_PATH = '/.well-known/jwks.json';

/**
 * RFC 8414 metadata and the JWKS of the token issuer; outside the partition, no token needed. One issuer serves the
 * machine flow (client_credentials) and the MCP surface's people (authorization code with PKCE, refresh): one
 * document is published, and its one token endpoint takes both.
 */
export function registerWellKnown(
  app: FastifyInstance,
  { config, keyRing }: { config: { tokenIssuer: string }; keyRing: KeyRing },
) {
  const issuer = config.tokenIssuer;
  const people = peopleAuthorizationMetadata(issuer);
  const metadata = {
    issuer,
    authorization_endpoint: people.authorization_endpoint,
    token_endpoint: `${issuer}${operations.issueToken.path}`,
    revocation_endpoint: people.revocation_endpoint,
    jwks_uri: `${issuer}${JWKS_PATH}`,
    grant_types_supported: ['client_credentials', ...people.grant_types_supported],
    response_types_supported: people.response_types_supported,
    response_modes_supported: people.response_modes_supported,
    code_challenge_methods_supported: people.code_challenge_methods_supported,
    token_endpoint_auth_methods_supported: [
      'client_secret_basic',
      'client_secret_post',
      ...people.token_endpoint_auth_methods_supported,
    ],
    revocation_endpoint_auth_methods_supported: people.revocation_endpoint_auth_methods_supported,
    scopes_supported: [...CONTRACT_SCOPES, ...people.scopes_supported],
    authorization_response_iss_parameter_supported: people.authorization_response_iss_parameter_supported,
  };
  app.get('/.well-known/oauth-authorization-server', async (_request, reply) => {
    reply.header('cache-control', 'public, max-age=3600');
    return metadata;
  });
  app.get(JWKS_PATH, async (_request, reply) => {
    // Short: a new key signs as soon as it is created, and verifiers refetch on an unknown kid anyway.
    reply.header('cache-control', 'public, max-age=60');
    return keyRing.jwks();
  });
}
