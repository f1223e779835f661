import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { RequestError, invalidBody } from '../../shared/request-error.js';
import { errorResponse } from '../core/error-response.js';
import { mintRequestId } from '../core/request-id.js';
import { callOf } from './http-call.js';

/** Fastify's own refusals (body parsing, limits, content type) in the ApiError shape. */
function fromFastifyError(error: FastifyError): RequestError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new RequestError(
        413,
        'payload_too_large',
        'PLATFORM_INVALID_REQUEST',
        'The request body is larger than the limit.',
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new RequestError(
        415,
        'unsupported_media_type',
        'PLATFORM_INVALID_REQUEST',
        'Unsupported Content-Type; send application/json.',
      );
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return invalidBody('The body is empty but Content-Type is application/json.');
    default:
      if (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY')
        return invalidBody(`The body is not valid JSON: ${error.message}`);
      if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
        return new RequestError(error.statusCode, 'invalid_request', 'PLATFORM_INVALID_REQUEST', error.message);
      }
      return undefined;
  }
}

/**
 * Every failure of an HTTP call in the contract's error shapes: Fastify's own refusals first, then the mapping every
 * transport shares (error-response.ts).
 */
export function installErrorHandler(app: FastifyInstance) {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const { status, code, headers, body } = errorResponse(fromFastifyError(error) ?? error, request.id, request.log);
    // Counted by the operation's pipeline as the response leaves (operation-routes.ts, onSend).
    callOf(request).refusal = code;
    if (headers) reply.headers(headers);
    return reply.code(status).send(body);
  });
}

/** Fastify's refusals before routing (a path that does not decode, a parameter too long): message and keyword. */
const ROUTING_REFUSALS: Record<string, readonly [message: string, keyword: string]> = {
  FST_ERR_BAD_URL: ['The path holds a percent-encoding that is not UTF-8; encode the path as UTF-8.', 'encoding'],
  FST_ERR_MAX_PARAM_LENGTH: [
    'A path parameter is longer than 100 characters; no resource has such an id.',
    'maxLength',
  ],
};

/** Fastify's `frameworkErrors`: refusals before routing, a 400 in the ApiError shape with the request id like any answer. */
export function routingErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const [message, keyword] = ROUTING_REFUSALS[error.code] ?? [MALFORMED[2], 'parse'];
  const refusal = new RequestError(400, 'invalid_request', 'PLATFORM_INVALID_REQUEST', message, {
    issues: [{ location: 'path', path: '', message, keyword }],
  });
  const { body } = errorResponse(refusal, request.id, request.log);
  return reply.header('x-request-id', request.id).code(400).send(body);
}

type ClientRefusal = readonly [status: number, error: string, message: string];

const CLIENT_REFUSALS: Record<string, ClientRefusal> = {
  HPE_HEADER_OVERFLOW: [
    431,
    'request_header_fields_too_large',
    'The request line and headers are larger than the server accepts (16 KiB in all); send a shorter URL or fewer, shorter headers.',
  ],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'request_timeout', 'The request was not received in full within the time limit.'],
};
const MALFORMED: ClientRefusal = [400, 'invalid_request', 'The request is not valid HTTP/1.1.'];

/** Whether a response on this connection has started: Node's own check before it answers a client error. */
function responseStarted(socket: Socket): boolean {
  return (socket as Socket & { _httpMessage?: { headersSent: boolean } })._httpMessage?.headersSent === true;
}

/**
 * Refusals before any request exists (Node's parser failed: oversized header block, malformed request, slow client)
 * in the ApiError shape too, instead of Fastify's own body; the connection is closed, as Node and Fastify do.
 */
export function clientErrorHandler(logger: Logger) {
  return (err: Error & { code?: string }, socket: Socket) => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    logger.debug({ err }, 'client error');
    if (socket.writable && !responseStarted(socket)) {
      const [status, error, message] = CLIENT_REFUSALS[err.code ?? ''] ?? MALFORMED;
      const requestId = mintRequestId();
      const body = JSON.stringify({
        error,
        code: 'PLATFORM_INVALID_REQUEST',
        user_message: message,
        request_id: requestId,
      });
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `x-request-id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy(err);
  };
}
