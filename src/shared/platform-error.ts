import { errorCodes, type ErrorCode } from '../generated/contract.js';

export type ErrorDetails = Record<string, string | number | boolean | null>;
type ErrorEntry = (typeof errorCodes)[number];

const catalogue = new Map<string, ErrorEntry>(errorCodes.map((entry) => [entry.code, entry]));

export function errorEntry(code: ErrorCode): ErrorEntry {
  return catalogue.get(code)!;
}

/** A refusal in the ExternalPlatformError shape; status, category and retryability come from the contract's error table. */
export class PlatformError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetails,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'PlatformError';
  }

  get status(): number {
    return errorEntry(this.code).status;
  }
}

/** A field that breaks a rule the contract's schema cannot state: PLATFORM_INVALID_INPUT, naming the field. */
export function invalidInput(field: string, message: string, details: ErrorDetails = {}): PlatformError {
  return new PlatformError('PLATFORM_INVALID_INPUT', message, { field, ...details });
}
