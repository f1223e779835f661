import { sql } from 'kysely';

/** What a transaction-level advisory lock guards: keys of different purposes never name the same lock. */
export type LockNamespace = 'idempotency-key' | 'patient-identity' | 'signing-keys';

/** A lock's text key: its namespace, then the parts that identify what it guards. */
export function lockKey(namespace: LockNamespace, ...parts: string[]): string {
  return [namespace, ...parts].join('\n');
}

/**
 * Waits for the lock (bounded by lock_timeout) and holds it until the transaction ends. Both functions are strict,
 * so a null key takes no lock. `key` may be a reusableQuery placeholder.
 */
export const xactLock = (key: string | null) => sql<void>`pg_advisory_xact_lock(hashtextextended(${key}, 0))`;

/** Takes the lock only if it is free, without waiting; true when taken. */
export const tryXactLock = (key: string) => sql<boolean>`pg_try_advisory_xact_lock(hashtextextended(${key}, 0))`;
