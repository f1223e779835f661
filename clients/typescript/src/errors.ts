import { ERROR_CODES } from './generated/contract.js';
import type { components } from './generated/schema.js';

export type KnownErrorCode = components['schemas']['KnownErrorCode'];
export type ExternalPlatformError = components['schemas']['ExternalPlatformError'];
export type ApiErrorBody = components['schemas']['ApiError'];
export type ErrorCategory = ExternalPlatformError['error']['category'];

/** What the contract says of a code (x-svc-error-codes), or undefined for a code newer than this client. */
export function knownCode(code: string): (typeof ERROR_CODES)[KnownErrorCode] | undefined {
  return Object.hasOwn(ERROR_CODES, code) ? ERROR_CODES[code as KnownErrorCode] : undefined;
}

/** Statuses a gateway or proxy may answer without a contract body, after which a retry may succeed. */
const TRANSIENT_STATUSES = new Set([429, 502, 503, 504]);

/**
 * A refusal in either of the contract's shapes (ExternalPlatformError, ApiError), read as one:
 * branch on `code` (typed with the known codes; a newer code is still a string), else on `category` and `retryable`.
 */
export class ExtensionApiError extends Error {
  readonly code: KnownErrorCode | (string & {});
  readonly category: ErrorCategory | undefined;
  readonly retryable: boolean;
  readonly terminal: boolean | undefined;
  readonly requestId: string | undefined;
  /** Retry-After in seconds, when the answer carried one. */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    readonly status: number,
    readonly body: ExternalPlatformError | ApiErrorBody | undefined,
    headers: Headers,
  ) {
    const platform =
      body !== undefined && typeof body.error === 'object' ? (body as ExternalPlatformError).error : undefined;
    const api = body !== undefined && typeof body.error === 'string' ? (body as ApiErrorBody) : undefined;
    const code = platform?.code ?? api?.code ?? `HTTP_${status}`;
    super(platform?.message ?? api?.error_description ?? api?.user_message ?? api?.error ?? `HTTP ${status}`);
    this.name = 'ExtensionApiError';
    const known = knownCode(code);
    this.code = code;
    this.category = platform?.category ?? (known?.category as ErrorCategory | undefined);
    this.retryable = platform?.retryable ?? known?.retryable ?? (body === undefined && TRANSIENT_STATUSES.has(status));
    this.terminal = platform?.terminal ?? known?.terminal;
    this.requestId = platform?.correlationId ?? api?.request_id ?? headers.get('x-request-id') ?? undefined;
    this.retryAfterSeconds = retryAfterSeconds(headers.get('retry-after'));
  }

  /** The body when it is the ExternalPlatformError shape (an object in `error`). */
  get platformError(): ExternalPlatformError['error'] | undefined {
    return this.body !== undefined && typeof this.body.error === 'object' ? this.body.error : undefined;
  }

  /** The body when it is the ApiError shape (a string in `error`, beside `code` and `issues`). */
  get apiError(): ApiErrorBody | undefined {
    return this.body !== undefined && typeof this.body.error === 'string' ? (this.body as ApiErrorBody) : undefined;
  }
}

/** Retry-After as delay-seconds or an HTTP date (RFC 9110 10.2.3). */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

/** A parsed body in one of the error shapes, or undefined (a proxy's page, an empty body). */
const errorBody = (value: unknown) =>
  value !== null && typeof value === 'object' && 'error' in value
    ? (value as ExternalPlatformError | ApiErrorBody)
    : undefined;

/** The error of a failed answer, read from a copy so that the answer's own body stays unread. */
export async function errorOf(response: Response): Promise<ExtensionApiError> {
  const body = await response
    .clone()
    .json()
    .then(errorBody, () => undefined);
  return new ExtensionApiError(response.status, body, response.headers);
}

/** The data of an openapi-fetch result, or its error thrown as an ExtensionApiError. */
export function unwrap<Data>(result: { data?: Data; error?: unknown; response: Response }): Data {
  if (result.error === undefined && result.response.ok) return result.data as Data;
  throw new ExtensionApiError(result.response.status, errorBody(result.error), result.response.headers);
}
