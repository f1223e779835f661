import { sql, type Kysely } from 'kysely';

/**
 * Holds an idempotency key's lock until the transaction ends, then returns the response stored under the key.
 * One statement and one round trip, yet the read sees what a twin committed while this one waited or just before:
 * a VOLATILE function's queries each take a fresh snapshot, where a single statement's snapshot predates the
 * locks it takes (PostgreSQL, "Function Volatility Categories"). The lock waits at most `lock_wait`, which is set
 * as the transaction's lock_timeout, so it bounds every later lock wait of the command too.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function idempotency_key_hold(lock_wait text, lock_id bigint, for_agency text, for_extension text, for_key text)
    returns table (fingerprint text, response_status integer, response_headers jsonb, response_body text)
    language sql volatile strict as $$
      select set_config('lock_timeout', lock_wait, true);
      select pg_advisory_xact_lock(lock_id);
      select k.fingerprint, k.response_status, k.response_headers, k.response_body
        from idempotency_keys k
       where k.agency_id = for_agency and k.extension_id = for_extension and k.key = for_key
         and k.expires_at > now() and k.response_status is not null;
    $$`.execute(db);
}
