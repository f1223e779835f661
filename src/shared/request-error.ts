import type { components } from '../generated/openapi.js';
import type { ErrorCode } from '../generated/contract.js';

export type ValidationIssue = components['schemas']['ValidationIssue'];

/**
 * A refusal in the ApiError shape: request validation and authentication failures,
 * and HTTP-level refusals outside any operation (404, 405, 413, 415).
 */
export class RequestError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly code: ErrorCode,
    message: string,
    readonly extra: {
      issues?: ValidationIssue[];
      nextStep?: string;
      details?: Record<string, unknown>;
      headers?: Record<string, string>;
    } = {},
  ) {
    super(message);
    this.name = 'RequestError';
  }
}

/** A body that cannot be read as the contract's JSON: one issue on the body as a whole, named by `keyword`. */
export function invalidBody(message: string, keyword = 'parse'): RequestError {
  return new RequestError(400, 'invalid_request', 'PLATFORM_INVALID_REQUEST', message, {
    issues: [{ location: 'body', path: '', message, keyword }],
  });
}
