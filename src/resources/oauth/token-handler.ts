import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { operations } from '../../generated/contract.js';
import { RequestError } from '../../shared/request-error.js';
import { unstorableTextRefusal } from '../../gateway/core/request-validation.js';
import type { ClientCredentialsGrant } from '../../identity/client-credentials.js';
import type { Handler } from '../handler.js';

export function issueTokenHandler(grant: ClientCredentialsGrant): Handler<'issueToken'> {
  return async (ctx) => {
    const issued = await grant.issue({
      body: ctx.body,
      authorization: ctx.headers.authorization,
      remoteAddress: ctx.source.ip,
    });
    // RFC 6749 5.1: a token response is never cached.
    ctx.response.header('cache-control', 'no-store').header('pragma', 'no-cache');
    const token = {
      access_token: issued.accessToken,
      token_type: 'Bearer' as const,
      expires_in: issued.expiresIn,
      scope: issued.scope,
      agency_id: issued.agencyId,
      extension_id: issued.extensionId,
      phi_mode: issued.phiMode,
    };
    return { ...token, data: token };
  };
}

const GRANT_TYPE = 'client_credentials';

/** A grant of the token route answered elsewhere (the MCP surface's authorization server); it takes over the reply. */
export type GrantHandover = (request: FastifyRequest, reply: FastifyReply) => void;

/**
 * RFC 6749 5.2 names another grant type unsupported_grant_type, which the contract's request validation would
 * report as a generic invalid_request; this answers first. The grants of `handovers` (the MCP surface's
 * authorization_code and refresh_token: one issuer, one token endpoint) go to their handler. A hook of the token
 * route only: as a root hook, its promise would defer every other route's handler to a microtask.
 */
export function routeGrantTypes(app: FastifyInstance, handovers: Record<string, GrantHandover> = {}) {
  const { method, url } = operations.issueToken;
  const otherGrantTypes = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const grantType = (request.body as { grant_type?: unknown } | undefined)?.grant_type;
    if (grantType === undefined || grantType === GRANT_TYPE) return;
    if (typeof grantType === 'string' && Object.hasOwn(handovers, grantType)) {
      const unstorable = unstorableTextRefusal('body', request.body);
      if (unstorable) throw unstorable;
      return handovers[grantType](request, reply);
    }
    const supported = [GRANT_TYPE, ...Object.keys(handovers)].join(', ');
    throw new RequestError(
      400,
      'unsupported_grant_type',
      'PLATFORM_INVALID_REQUEST',
      `grant_type must be one of ${supported}; no other grant is supported.`,
      {
        issues: [{ location: 'body', path: '/grant_type', message: `must be one of ${supported}`, keyword: 'enum' }],
      },
    );
  };
  app.addHook('onRoute', (route) => {
    if (route.method !== method || route.url !== url) return;
    route.preValidation = [otherGrantTypes, ...[route.preValidation ?? []].flat()];
  });
}
