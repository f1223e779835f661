import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { PlatformError, errorEntry } from '../shared/platform-error.js';
import { RequestError, invalidBody } from '../shared/request-error.js';
import { isDatabaseUnavailable, isStatementTimeout } from '../db/sql-state.js';
import { mintRequestId } from './request-id.js';

function sendPlatformError(error: PlatformError, request: FastifyRequest, reply: FastifyReply) {
  const entry = errorEntry(error.code);
  if (error.headers) reply.headers(error.headers);
  return reply.code(entry.status).send({
    error: {
      code: error.code,
      message: error.message,
      category: entry.category,
      retryable: entry.retryable,
      terminal: entry.terminal,
      correlationId: request.id,
      ...(error.details ? { details: error.details } : {}),
    },
  });
}

function sendRequestError(error: RequestError, request: FastifyRequest, reply: FastifyReply) {
  const { issues, nextStep, details, headers } = error.extra;
  if (headers) reply.headers(headers);
  return reply.code(error.status).send({
    error: error.error,
    code: error.code,
    user_message: error.message,
    ...(nextStep ? { user_next_step: nextStep } : {}),
    ...(issues ? { issues } : {}),
    ...(details ? { details } : {}),
    request_id: request.id,
  });
}

/** Fastify's own refusals (body parsing, limits, content type) in the ApiError shape. */
function fromFastifyError(error: FastifyError): RequestError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new RequestError(413, 'payload_too_large', 'PLATFORM_INVALID_REQUEST', 'The request body is larger than the limit.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new RequestError(415, 'unsupported_media_type', 'PLATFORM_INVALID_REQUEST', 'Unsupported Content-Type; send application/json.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return invalidBody('The body is empty but Content-Type is application/json.');
    default:
      if (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') return invalidBody(`The body is not valid JSON: ${error.message}`);
      if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
        return new RequestError(error.statusCode, 'invalid_request', 'PLATFORM_INVALID_REQUEST', error.message);
      }
      return undefined;
  }
}

/** Database trouble that is not the caller's fault and passes: worth a retry, so not a 500. */
function fromDatabaseError(error: unknown): PlatformError | undefined {
  if (isDatabaseUnavailable(error)) {
    return new PlatformError('PLATFORM_SERVICE_UNAVAILABLE', 'The service is overloaded or its database is unreachable; retry shortly.', undefined, { 'retry-after': '1' });
  }
  if (isStatementTimeout(error)) return new PlatformError('PLATFORM_TIMEOUT', 'The operation did not finish in time; nothing of a command was committed.');
  return undefined;
}

/** One place maps every failure to the contract's error shapes; anything unexpected is masked. */
export function installErrorHandler(app: FastifyInstance) {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof PlatformError) return sendPlatformError(error, request, reply);
    if (error instanceof RequestError) return sendRequestError(error, request, reply);
    const mapped = fromFastifyError(error);
    if (mapped) return sendRequestError(mapped, request, reply);
    const database = fromDatabaseError(error);
    if (database) {
      request.log.warn({ err: error }, 'database unavailable or too slow');
      return sendPlatformError(database, request, reply);
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendPlatformError(new PlatformError('PLATFORM_INTERNAL_ERROR', 'An unexpected error occurred. Quote the correlationId to support.'), request, reply);
  });
}

type ClientRefusal = readonly [status: number, error: string, message: string];

const CLIENT_REFUSALS: Record<string, ClientRefusal> = {
  HPE_HEADER_OVERFLOW: [431, 'request_header_fields_too_large', 'The request line and headers are larger than the server accepts (16 KiB in all); send a shorter URL or fewer, shorter headers.'],
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
      const body = JSON.stringify({ error, code: 'PLATFORM_INVALID_REQUEST', user_message: message, request_id: requestId });
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `x-request-id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy(err);
  };
}
