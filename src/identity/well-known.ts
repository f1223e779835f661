import type { FastifyInstance } from 'fastify';
import { operations } from '../generated/contract.js';
import { CONTRACT_SCOPES } from './grants.js';
import type { KeyRing } from './signing-keys.js';

export const JWKS_PATH = '/.well-known/jwks.json';

/** RFC 8414 metadata and the JWKS of the token issuer; outside the partition, no token needed. */
export function registerWellKnown(app: FastifyInstance, { config, keyRing }: { config: { tokenIssuer: string }; keyRing: KeyRing }) {
  const metadata = {
    issuer: config.tokenIssuer,
    token_endpoint: `${config.tokenIssuer}${operations.issueToken.path}`,
    jwks_uri: `${config.tokenIssuer}${JWKS_PATH}`,
    grant_types_supported: ['client_credentials'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    response_types_supported: [],
    scopes_supported: CONTRACT_SCOPES,
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
