import type { FastifyInstance } from 'fastify';
import { operations } from '../generated/contract.js';
import { CONTRACT_SCOPES } from './grants.js';
import { peopleAuthorizationMetadata } from './mcp-authorization/authorization-server.js';
import type { KeyRing } from './signing-keys.js';
import { ASSERTION_ALGORITHMS } from './client-keys.js';

const JWKS_PATH = '/.well-known/jwks.json';

/** How machine clients authenticate at the token endpoint: a secret, or an assertion signed with a registered key. */
const MACHINE_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'private_key_jwt'];

/**
 * RFC 8414 metadata and the JWKS of the token issuer; outside the partition, no token needed. One issuer serves the
 * machine flow (client_credentials) and the MCP surface's people (authorization code with PKCE, refresh): one
 * document is published, and its one token endpoint takes both. SMART Backend Services clients read
 * theirs from /.well-known/smart-configuration.
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
    token_endpoint_auth_methods_supported: [...MACHINE_AUTH_METHODS, ...people.token_endpoint_auth_methods_supported],
    token_endpoint_auth_signing_alg_values_supported: [...ASSERTION_ALGORITHMS],
    revocation_endpoint_auth_methods_supported: people.revocation_endpoint_auth_methods_supported,
    scopes_supported: [...CONTRACT_SCOPES, ...people.scopes_supported],
    authorization_response_iss_parameter_supported: people.authorization_response_iss_parameter_supported,
  };
  app.get('/.well-known/oauth-authorization-server', async (_request, reply) => {
    reply.header('cache-control', 'public, max-age=3600');
    return metadata;
  });
  // SMART Backend Services discovery: the machine flow alone, as a FHIR client library reads it.
  const smartConfiguration = {
    issuer,
    jwks_uri: metadata.jwks_uri,
    token_endpoint: metadata.token_endpoint,
    grant_types_supported: ['client_credentials'],
    token_endpoint_auth_methods_supported: MACHINE_AUTH_METHODS,
    token_endpoint_auth_signing_alg_values_supported: [...ASSERTION_ALGORITHMS],
    scopes_supported: [...CONTRACT_SCOPES],
    capabilities: ['client-confidential-asymmetric', 'client-confidential-symmetric'],
  };
  app.get('/.well-known/smart-configuration', async (_request, reply) => {
    reply.header('cache-control', 'public, max-age=3600');
    return smartConfiguration;
  });
  app.get(JWKS_PATH, async (_request, reply) => {
    // Short: a new key signs as soon as it is created, and verifiers refetch on an unknown kid anyway.
    reply.header('cache-control', 'public, max-age=60');
    return keyRing.jwks();
  });
}
