import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { tokenFailureLimits } from '../generated/contract.js';
import { FailureLimiter, type FailureLimits } from './failure-limits.js';

/** Failed token requests allowed over a rolling window (the contract's x-svc-token-failure-limits); the subject is the client id. */
export const TOKEN_FAILURE_LIMITS: FailureLimits = {
  perSubject: tokenFailureLimits.per_client,
  perAddress: tokenFailureLimits.per_address,
  windowSeconds: tokenFailureLimits.window_seconds,
};

/**
 * The token endpoint's limits. A client id is in every access token, so anyone can spend its failures: over its
 * limit, its failures are answered 429 instead of 401, but its right secret is still accepted.
 */
export class TokenFailureLimiter extends FailureLimiter {
  constructor(db: Kysely<DB>, limits: FailureLimits = TOKEN_FAILURE_LIMITS) {
    super(db, {
      limits,
      kinds: { address: 'address', subject: 'client' },
      refusals: {
        what: 'Too many failed token requests',
        subject: 'for this client_id (its right secret is still accepted).',
      },
    });
  }
}
