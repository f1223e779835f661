import type { components } from '../../generated/openapi.js';
import { statusOf, type QueryTokenRow } from './query-token-repository.js';

type QueryToken = components['schemas']['QueryToken'];

/** A stored token as the contract's QueryToken: never its secret or hash. */
export function queryTokenView(row: QueryTokenRow, now: Date): QueryToken {
  return {
    id: row.id,
    name: row.name,
    status: statusOf(row, now),
    query_id: row.query_id,
    parameters: row.parameters,
    phi_mode: row.phi_mode,
    token_hint: row.token_hint,
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
    revoked_at: row.revoked_at?.toISOString() ?? null,
    last_used_at: row.last_used_at?.toISOString() ?? null,
  };
}
