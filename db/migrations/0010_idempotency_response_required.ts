import { sql, type Kysely } from 'kysely';

/**
 * A key is written once, with its response, by the command's ledger statement (src/gateway/core/command-ledger.ts): the
 * claim row whose response was filled in later is gone, so every key carries its response and the schema says so.
 * Under the claim design a row without a response existed only inside its own transaction, so none is committed.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table idempotency_keys
      drop constraint idempotency_keys_response_whole,
      alter column response_status set not null,
      alter column response_headers set not null,
      alter column response_body set not null`.execute(db);
}
