import type { FastifyInstance } from 'fastify';

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
    done(null, Object.fromEntries(new URLSearchParams(String(body))));
  });
}
