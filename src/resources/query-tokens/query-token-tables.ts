import type { ColumnType, JSONColumnType } from 'kysely';
import type { PhiMode } from '../../shared/principal.js';
import type { DefaultedTimestamp, Timestamp } from '../../db/tables/tenant-row.js';

/** db/migrations/0020_query_tokens.ts: a credential that runs one governed query with fixed parameters. */
export interface QueryTokensTable {
  agency_id: string;
  id: string;
  /** The extension that created it: its runs are metered and audited under that extension. */
  extension_id: string;
  name: string;
  query_id: string;
  parameters: JSONColumnType<Record<string, unknown>, string, string>;
  phi_mode: PhiMode;
  /** SHA-256 of the secret, base64url: the secret itself is never stored. */
  token_hash: string;
  token_hint: string;
  created_at: DefaultedTimestamp;
  expires_at: Timestamp;
  revoked_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  last_used_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface QueryTokenTables {
  query_tokens: QueryTokensTable;
}
