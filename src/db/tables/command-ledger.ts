import type { ColumnType, Generated } from 'kysely';
import type { PhiMode } from '../../shared/principal.js';

interface IdempotencyKeysTable {
  agency_id: string;
  extension_id: string;
  key: string;
  operation_id: string;
  fingerprint: string;
  /** A key is written once, with its response (db/migrations/0010_idempotency_response_required.ts). */
  response_status: number;
  /** Written as JSON text, read back as the object. */
  response_headers: ColumnType<Record<string, string>, string, string>;
  response_body: string;
  created_at: Generated<Date>;
  expires_at: ColumnType<Date, Date | string, Date | string>;
}

export type AuditOutcome = 'success' | 'failure' | 'denied';

/** Insertable, never updatable: the database refuses UPDATE and DELETE as well. */
type AppendOnly<T, Insert = T> = ColumnType<T, Insert, never>;

interface AuditEventsTable {
  id: AppendOnly<string, string | undefined>;
  agency_id: AppendOnly<string>;
  extension_id: AppendOnly<string>;
  operation_id: AppendOnly<string>;
  resource_type: AppendOnly<string | null>;
  resource_ids: AppendOnly<string[]>;
  outcome: AppendOnly<AuditOutcome>;
  status: AppendOnly<number>;
  request_id: AppendOnly<string>;
  phi_mode: AppendOnly<PhiMode>;
  source_system: AppendOnly<string | null>;
  external_reference_id: AppendOnly<string | null>;
  /** What the call said about itself beyond resource ids (a governed query run: query, parameters, input, token). */
  details: AppendOnly<Record<string, unknown> | null, string | null | undefined>;
  occurred_at: AppendOnly<Date, Date | undefined>;
}

export interface CommandLedgerTables {
  idempotency_keys: IdempotencyKeysTable;
  audit_events: AuditEventsTable;
}
