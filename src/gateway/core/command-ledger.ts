import { sql, type Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { asPrepared } from '../../db/reusable-query.js';
import { PlatformError } from '../../shared/platform-error.js';
import type { ErrorCode } from '../../generated/contract.js';
import { insertAuditEvents, type AuditEvent } from '../audit.js';
import { insertMeteringEvents, type MeteringEvent } from './metering.js';

export interface CommandIdentity {
  agencyId: string;
  extensionId: string;
  key: string;
  operationId: string;
  fingerprint: string;
}

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** What a command leaves besides its own rows: its audit record, its metering event and the response a retry replays. */
export interface CommandLedger {
  audit: AuditEvent;
  metering: MeteringEvent;
  response: StoredResponse;
}

const FAILURES: Record<string, { code: ErrorCode; record: string }> = {
  audit_events: { code: 'PLATFORM_AUDIT_WRITE_FAILED', record: 'audit' },
  metering_segments: { code: 'PLATFORM_METERING_WRITE_FAILED', record: 'metering' },
};

/** A row the database refused names its table; anything else (a lost connection) is left to the error handler. */
function ledgerFailure(err: unknown): unknown {
  const failure = FAILURES[(err as { table?: string }).table ?? ''];
  if (!failure) return err;
  const error = new PlatformError(
    failure.code,
    `The ${failure.record} record could not be written, so nothing of the command was committed.`,
  );
  error.cause = err;
  return error;
}

/**
 * Writes the ledger in the command's transaction, as one prepared statement: inside the transaction each round
 * trip costs more than the writes. The key is inserted with its response (or takes over an expired one). False when
 * a live key is there already: a twin committed it after this command started, so this one must not commit.
 */
export async function writeCommandLedger(
  trx: Transaction<DB>,
  id: CommandIdentity,
  ledger: CommandLedger,
  retentionHours: number,
): Promise<boolean> {
  const { audit, metering, response } = ledger;
  const statement = sql<{ key: string }>`
    with audit as (${insertAuditEvents([audit])}), metering as (${insertMeteringEvents([metering])})
    insert into idempotency_keys (agency_id, extension_id, key, operation_id, fingerprint, expires_at, response_status, response_headers, response_body)
    values (${id.agencyId}, ${id.extensionId}, ${id.key}, ${id.operationId}, ${id.fingerprint}, now() + make_interval(hours => ${retentionHours}),
      ${response.status}, ${JSON.stringify(response.headers)}, ${response.body})
    on conflict (agency_id, extension_id, key) do update set
      operation_id = excluded.operation_id, fingerprint = excluded.fingerprint, created_at = excluded.created_at, expires_at = excluded.expires_at,
      response_status = excluded.response_status, response_headers = excluded.response_headers, response_body = excluded.response_body
    where idempotency_keys.expires_at <= now()
    returning key`;
  try {
    const { rows } = await trx.executeQuery(asPrepared('command-ledger', statement.compile(trx)));
    return rows.length > 0;
  } catch (err) {
    throw ledgerFailure(err);
  }
}
