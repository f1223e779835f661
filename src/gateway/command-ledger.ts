import { sql, type Transaction } from 'kysely';
import type { DB } from '../db/schema.js';
import { asPrepared } from '../db/reusable-query.js';
import { PlatformError } from '../errors/platform-error.js';
import type { ErrorCode } from '../generated/contract.js';
import { insertAuditEvents, type AuditEvent } from './audit.js';
import { insertMeteringEvents, type MeteringEvent } from './metering.js';
import type { StoredResponse } from './idempotency.js';

/** What a command leaves besides its own rows: its audit record, its metering event and the response a retry replays. */
export interface CommandLedger {
  audit: AuditEvent;
  metering: MeteringEvent;
  response: StoredResponse;
}

export interface LedgerKey {
  agencyId: string;
  extensionId: string;
  key: string;
}

const FAILURES: Record<string, { code: ErrorCode; record: string }> = {
  audit_events: { code: 'PLATFORM_AUDIT_WRITE_FAILED', record: 'audit' },
  metering_segments: { code: 'PLATFORM_METERING_WRITE_FAILED', record: 'metering' },
};

/** A row the database refused names its table; anything else (a lost connection) is left to the error handler. */
function ledgerFailure(err: unknown): unknown {
  const failure = FAILURES[(err as { table?: string }).table ?? ''];
  if (!failure) return err;
  const error = new PlatformError(failure.code, `The ${failure.record} record could not be written, so nothing of the command was committed.`);
  error.cause = err;
  return error;
}

/**
 * Writes the ledger in the command's transaction, as one prepared statement: inside the transaction each round
 * trip costs more than the three writes. The key's row was claimed by this transaction, so the update finds it.
 */
export async function writeCommandLedger(trx: Transaction<DB>, key: LedgerKey, { audit, metering, response }: CommandLedger): Promise<void> {
  const statement = sql`
    with audit as (${insertAuditEvents([audit])}), metering as (${insertMeteringEvents([metering])})
    update idempotency_keys
    set response_status = ${response.status}, response_headers = ${JSON.stringify(response.headers)}, response_body = ${response.body}
    where agency_id = ${key.agencyId} and extension_id = ${key.extensionId} and key = ${key.key}`;
  try {
    await trx.executeQuery(asPrepared('command-ledger', statement.compile(trx)));
  } catch (err) {
    throw ledgerFailure(err);
  }
}
