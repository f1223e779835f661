import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { bodyLimits } from '../../generated/contract.js';
import { RequestError, invalidBody } from '../../shared/request-error.js';

const MAX_DEPTH = bodyLimits.max_depth;

// A longer value cannot be UTF-8's name anyway, and is not worth echoing.
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]{0,40})/i;
const UTF8_NAMES = new Set(['utf-8', 'utf8']);

/** Bodies are UTF-8 (the contract says so): another charset would be read as UTF-8 and mean something else. */
function assertUtf8Charset(request: FastifyRequest) {
  const charset = CHARSET.exec(request.headers['content-type'] ?? '')?.[1].toLowerCase();
  if (charset === undefined || UTF8_NAMES.has(charset)) return;
  throw new RequestError(
    415,
    'unsupported_media_type',
    'PLATFORM_INVALID_REQUEST',
    `charset "${charset}" is not accepted; send UTF-8 (charset=utf-8, or no charset).`,
  );
}

/** The body as text, refused rather than repaired when its bytes are not UTF-8. */
function utf8Text(request: FastifyRequest, body: Buffer): string {
  assertUtf8Charset(request);
  if (!isUtf8(body)) throw invalidBody('The body is not valid UTF-8.', 'encoding');
  return body.toString('utf8');
}

/**
 * Whether JSON text nests arrays and objects deeper than `limit`, found in one pass over the text before it is
 * parsed (brackets inside strings skipped), so that nothing recursive (the idempotency fingerprint, the
 * validators, serializers) ever meets a body deeper than that. Exact for valid JSON; invalid JSON fails parsing.
 */
function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c) i++;
        else if (s === 0x22) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}

/** RFC 6749 form values are percent-encoded UTF-8; URLSearchParams would silently replace what is not. */
function assertPercentEncodedUtf8(text: string) {
  if (!text.includes('%')) return;
  try {
    decodeURIComponent(text);
  } catch {
    throw invalidBody('The form body has percent-escapes that are not valid UTF-8.', 'encoding');
  }
}

/**
 * JSON keeps Fastify's secure parser (prototype poisoning refused), but an empty body counts as
 * no body: many clients send Content-Type: application/json on a DELETE. The token endpoint's
 * RFC 6749 form encoding is parsed too; routes accept only the content types the contract lists.
 * Both are read as UTF-8 only, and JSON at most x-svc-body-limits.max_depth levels deep.
 */
export function installBodyParsers(app: FastifyInstance) {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    let text: string;
    try {
      text = utf8Text(request, body as Buffer);
      if (nestsDeeperThan(text, MAX_DEPTH))
        throw invalidBody(
          `The body nests arrays and objects more than ${MAX_DEPTH} levels deep, the limit.`,
          'maxDepth',
        );
    } catch (err) {
      return done(err as Error);
    }
    if (text === '') return done(null, undefined);
    return parseJson(request, text, done);
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer' }, (request, body, done) => {
    const fields = new Map<string, string>();
    try {
      const text = utf8Text(request, body as Buffer);
      assertPercentEncodedUtf8(text);
      for (const [name, value] of new URLSearchParams(text)) {
        if (fields.has(name)) throw repeatedField(name);
        fields.set(name, value);
      }
    } catch (err) {
      return done(err as Error);
    }
    return done(null, Object.fromEntries(fields));
  });
}

/**
 * RFC 6749 3.2: a parameter is sent at most once. Taking the first or the last would let two readers of one body
 * (a proxy's filter and this service) see different requests.
 */
function repeatedField(name: string): RequestError {
  return new RequestError(
    400,
    'invalid_request',
    'PLATFORM_INVALID_REQUEST',
    `The form field "${name}" is sent more than once; send each field once.`,
    {
      issues: [{ location: 'body', path: `/${name}`, message: 'must not be repeated', keyword: 'repeated' }],
    },
  );
}
