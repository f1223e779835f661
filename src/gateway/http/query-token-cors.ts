import type { FastifyInstance } from 'fastify';
import { operations } from '../../generated/contract.js';
import { isQueryTokenAuthorization } from '../../identity/query-tokens.js';
import { methodNotAllowed } from './not-found.js';

/**
 * CORS for Excel on the web, on the operations that take a governed query token (x-svc-query-token: `runQuery`) and no
 * other: an Office Script calls them from the browser. Office Scripts run in a sandboxed frame whose origin is `null`;
 * Office's own pages are served under the Microsoft domains below. Only answers to requests carrying a query token
 * get Access-Control-Allow-Origin, so a page can never read what an extension's access token is answered.
 */
const OFFICE_HOSTS =
  /^https:\/\/([a-z0-9-]+\.)*(officeapps\.live\.com|office\.com|office365\.com|officescripts\.microsoftusercontent\.com)$/;

function isOfficeOrigin(origin: string): boolean {
  return origin === 'null' || OFFICE_HOSTS.test(origin);
}

const ALLOWED_HEADERS = 'authorization, content-type, svc-contract-version, idempotency-key';
const EXPOSED_HEADERS =
  'x-request-id, svc-extension-contract-version, retry-after, ratelimit, ratelimit-policy, deprecation';

const queryTokenPaths = new Set(
  (Object.values(operations) as { queryTokens: boolean; url: string }[])
    .filter((op) => op.queryTokens)
    .map((op) => op.url),
);

/** The preflight routes, and the header on query-token answers; before the operations are registered. */
export function installQueryTokenCors(app: FastifyInstance) {
  for (const url of queryTokenPaths) {
    app.options(url, async (request, reply) => {
      const origin = request.headers.origin;
      if (
        origin === undefined ||
        !isOfficeOrigin(origin) ||
        request.headers['access-control-request-method'] !== 'POST'
      ) {
        throw methodNotAllowed(request.method, request.url);
      }
      reply
        .code(204)
        .headers({
          'access-control-allow-origin': origin,
          'access-control-allow-methods': 'POST',
          'access-control-allow-headers': ALLOWED_HEADERS,
          'access-control-max-age': '600',
          vary: 'Origin',
        })
        .send();
    });
  }
  app.addHook('onRequest', (request, reply, done) => {
    const origin = request.headers.origin;
    // Most calls carry no Origin: one property read, then nothing.
    if (
      origin !== undefined &&
      queryTokenPaths.has(request.routeOptions.url ?? '') &&
      request.method === 'POST' &&
      isOfficeOrigin(origin) &&
      isQueryTokenAuthorization(request.headers.authorization)
    ) {
      reply.headers({
        'access-control-allow-origin': origin,
        'access-control-expose-headers': EXPOSED_HEADERS,
        vary: 'Origin',
      });
    }
    done();
  });
}
