import type { FastifyInstance } from 'fastify';
import { RequestError } from '../errors/request-error.js';

/**
 * JSON keeps Fastify's secure parser (prototype poisoning refused), but an empty body counts as
 * no body: many clients send Content-Type: application/json on a DELETE. The token endpoint's
 * RFC 6749 form encoding is parsed too; routes accept only the content types the contract lists.
 */
export function installBodyParsers(app: FastifyInstance) {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '') return done(null, undefined);
    return parseJson(request, body as string, done);
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    const fields = new Map<string, string>();
    for (const [name, value] of new URLSearchParams(String(body))) {
      if (fields.has(name)) return done(repeatedField(name));
      fields.set(name, value);
    }
    return done(null, Object.fromEntries(fields));
  });
}

/**
 * RFC 6749 3.2: a parameter is sent at most once. Taking the first or the last would let two readers of one body
 * (a proxy's filter and this service) see different requests.
 */
function repeatedField(name: string): RequestError {
  return new RequestError(400, 'invalid_request', 'PLATFORM_INVALID_REQUEST', `The form field "${name}" is sent more than once; send each field once.`, {
    issues: [{ location: 'body', path: `/${name}`, message: 'must not be repeated', keyword: 'repeated' }],
  });
}
