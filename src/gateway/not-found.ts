import type { FastifyInstance } from 'fastify';
import { RequestError } from '../shared/request-error.js';
import { allowedMethods, readOnlyReason } from './operation-paths.js';

/** Unknown paths answer 404 and known paths with another method 405 with Allow (and, on a read-only path, what to do instead), both as ApiError. */
export function installNotFound(app: FastifyInstance) {
  app.setNotFoundHandler(async (request) => {
    const allowed = allowedMethods(request.url);
    if (allowed) {
      const readOnly = readOnlyReason(request.url);
      const message = `${request.method} is not allowed on this path; use ${allowed.join(' or ')}.`;
      throw new RequestError(405, 'method_not_allowed', 'PLATFORM_INVALID_REQUEST', readOnly ? `${message} ${readOnly.reason}` : message, {
        headers: { allow: allowed.join(', ') },
        ...(readOnly ? { nextStep: readOnly.next_step } : {}),
      });
    }
    throw new RequestError(404, 'not_found', 'PLATFORM_RESOURCE_NOT_FOUND', `No route ${request.method} ${request.url.split('?')[0]}. The partition is described at /platform/api/openapi.json.`);
  });
}
