import type { FastifyInstance } from 'fastify';
import { RequestError } from '../shared/request-error.js';
import { allowedMethods } from './operation-paths.js';

/** Unknown paths answer 404 and known paths with another method 405 with Allow, both as ApiError. */
export function installNotFound(app: FastifyInstance) {
  app.setNotFoundHandler(async (request) => {
    const allowed = allowedMethods(request.url);
    if (allowed) {
      throw new RequestError(405, 'method_not_allowed', 'PLATFORM_INVALID_REQUEST', `${request.method} is not allowed on this path; use ${allowed.join(' or ')}.`, {
        headers: { allow: allowed.join(', ') },
      });
    }
    throw new RequestError(404, 'not_found', 'PLATFORM_RESOURCE_NOT_FOUND', `No route ${request.method} ${request.url.split('?')[0]}. The partition is described at /platform/api/openapi.json.`);
  });
}
