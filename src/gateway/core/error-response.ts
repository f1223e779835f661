import { PlatformError, errorEntry } from '../../shared/platform-error.js';
import type { ErrorCode } from '../../generated/contract.js';
import { RequestError } from '../../shared/request-error.js';
import { isDatabaseUnavailable, isStatementTimeout } from '../../db/sql-state.js';
import type { CallLogger } from './operation-call.js';

/** What a refusal says, whichever of the two error shapes its body has: for callers in this process. */
export interface Refusal {
  code: ErrorCode;
  message: string;
  /** From the contract's error table (x-svc-error-codes). */
  retryable: boolean;
  nextStep?: string;
}

/** A refusal as every transport answers it: the contract's status, headers and error body. */
interface ErrorResponse {
  status: number;
  /** The error code of the body (either shape), for the metrics. */
  code: ErrorCode;
  headers: Record<string, string> | undefined;
  body: unknown;
  refusal: Refusal;
}

function platformErrorResponse(error: PlatformError, requestId: string): ErrorResponse {
  const entry = errorEntry(error.code);
  return {
    status: entry.status,
    code: error.code,
    headers: error.headers,
    body: {
      error: {
        code: error.code,
        message: error.message,
        category: entry.category,
        retryable: entry.retryable,
        terminal: entry.terminal,
        correlationId: requestId,
        ...(error.details ? { details: error.details } : {}),
      },
    },
    refusal: { code: error.code, message: error.message, retryable: entry.retryable },
  };
}

function requestErrorResponse(error: RequestError, requestId: string): ErrorResponse {
  const { issues, nextStep, details, headers } = error.extra;
  return {
    status: error.status,
    code: error.code,
    headers,
    body: {
      error: error.error,
      code: error.code,
      user_message: error.message,
      ...(nextStep ? { user_next_step: nextStep } : {}),
      ...(issues ? { issues } : {}),
      ...(details ? { details } : {}),
      request_id: requestId,
    },
    refusal: {
      code: error.code,
      message: error.message,
      retryable: errorEntry(error.code).retryable,
      ...(nextStep ? { nextStep } : {}),
    },
  };
}

/** Database trouble that is not the caller's fault and passes: worth a retry, so not a 500. */
function fromDatabaseError(error: unknown): PlatformError | undefined {
  if (isDatabaseUnavailable(error)) {
    return new PlatformError(
      'PLATFORM_SERVICE_UNAVAILABLE',
      'The service is overloaded or its database is unreachable; retry shortly.',
      undefined,
      { 'retry-after': '1' },
    );
  }
  if (isStatementTimeout(error))
    return new PlatformError(
      'PLATFORM_TIMEOUT',
      'The operation did not finish in time; nothing of a command was committed.',
    );
  return undefined;
}

/** The one mapping of a failure to the contract's error shapes (ApiError or ExternalPlatformError); anything unexpected is masked. */
export function errorResponse(error: unknown, requestId: string, log: CallLogger): ErrorResponse {
  if (error instanceof PlatformError) return platformErrorResponse(error, requestId);
  if (error instanceof RequestError) return requestErrorResponse(error, requestId);
  const database = fromDatabaseError(error);
  if (database) {
    log.warn({ err: error }, 'database unavailable or too slow');
    return platformErrorResponse(database, requestId);
  }
  log.error({ err: error }, 'unhandled error');
  return platformErrorResponse(
    new PlatformError('PLATFORM_INTERNAL_ERROR', 'An unexpected error occurred. Quote the correlationId to support.'),
    requestId,
  );
}
