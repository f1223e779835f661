import type { FastifyInstance } from 'fastify';
import { RequestError } from '../../shared/request-error.js';
import { allowedMethods, readOnlyReason } from './operation-paths.js';

/** The 405 of a known path asked with another method (Allow, and on a read-only path what to do instead); undefined for an unknown path. */
export function methodNotAllowed(method: string, url: string): RequestError | undefined {
  const allowed = allowedMethods(url);
  if (!allowed) return undefined;
  const readOnly = readOnlyReason(url);
  const message = `${method} is not allowed on this path; use ${allowed.join(' or ')}.`;
  return new RequestError(
    405,
    'method_not_allowed',
    'PLATFORM_INVALID_REQUEST',
    readOnly ? `${message} ${readOnly.reason}` : message,
    {
      headers: { allow: allowed.join(', ') },
      ...(readOnly ? { nextStep: readOnly.next_step } : {}),
    },
  );
}

/** Unknown paths answer 404 and known paths with another method 405 with Allow (and, on a read-only path, what to do instead), both as ApiError. */
export function installNotFound(app: FastifyInstance) {
  app.setNotFoundHandler(async (request) => {
    throw (
      methodNotAllowed(request.method, request.url) ??
      new RequestError(
        404,
        'not_found',
        'PLATFORM_RESOURCE_NOT_FOUND',
        `No route ${request.method} ${request.url.split('?')[0]}. The partition is described at /platform/api/openapi.json.`,
      )
    );
  });
}
