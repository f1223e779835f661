import { sql } from 'kysely';

/** What a transaction-level advisory lock guards: keys of different purposes never name the same lock. */
type LockNamespace = 'idempotency-key' | 'patient-identity' | 'signing-keys';

/** A lock's text key: its namespace, then the parts that identify what it guards. */
export function lockKey(namespace: LockNamespace, ...parts: string[]): string {
  return [namespace, ...parts].join('\n');
}

/** The lock's number: advisory locks are named by a bigint. `key` may be a reusableQuery placeholder. */
export const lockId = (key: string | null) => sql<string>`hashtextextended(${key}, 0)`;

/** Waits for the lock (bounded by lock_timeout) and holds it until the transaction ends. Strict: a null key takes no lock. */
export const xactLock = (key: string | null) => sql<void>`pg_advisory_xact_lock(${lockId(key)})`;
