import { sql, type Selectable } from 'kysely';
import type { CommandStore, TenantStore } from '../../db/tenant-store.js';
import type { CursorSealer } from '../../db/cursor-sealer.js';
import { listPage, type ListOrder, type ListQuery, type Page } from '../../db/paging.js';
import type { QueryTokensTable } from './query-token-tables.js';

export type QueryTokenRow = Omit<Selectable<QueryTokensTable>, 'token_hash'>;
type QueryTokenStatus = 'active' | 'expired' | 'revoked';

const COLUMNS = [
  'query_tokens.id',
  'query_tokens.agency_id',
  'query_tokens.extension_id',
  'query_tokens.name',
  'query_tokens.query_id',
  'query_tokens.parameters',
  'query_tokens.phi_mode',
  'query_tokens.token_hint',
  'query_tokens.created_at',
  'query_tokens.expires_at',
  'query_tokens.revoked_at',
  'query_tokens.last_used_at',
] as const;

/** Newest first, served by query_tokens_extension_idx. */
const NEWEST: ListOrder = { columns: ['query_tokens.created_at', 'query_tokens.id'], direction: 'desc' };

/** The tokens one extension created: another extension's tokens are not its to see or revoke. */
function extensionTokens(store: TenantStore, extensionId: string) {
  return store.selectFrom('query_tokens').where('query_tokens.extension_id', '=', extensionId);
}

export function statusOf(row: Pick<QueryTokenRow, 'revoked_at' | 'expires_at'>, now: Date): QueryTokenStatus {
  if (row.revoked_at) return 'revoked';
  return row.expires_at <= now ? 'expired' : 'active';
}

export async function listQueryTokenPage(
  store: TenantStore,
  extensionId: string,
  status: QueryTokenStatus | undefined,
  page: ListQuery,
  cursors: CursorSealer,
): Promise<Page<QueryTokenRow>> {
  let tokens = extensionTokens(store, extensionId);
  if (status === 'revoked') tokens = tokens.where('query_tokens.revoked_at', 'is not', null);
  if (status === 'active')
    tokens = tokens
      .where('query_tokens.revoked_at', 'is', null)
      .where('query_tokens.expires_at', '>', sql<Date>`now()`);
  if (status === 'expired')
    tokens = tokens
      .where('query_tokens.revoked_at', 'is', null)
      .where('query_tokens.expires_at', '<=', sql<Date>`now()`);
  return listPage(store, tokens.select(COLUMNS), NEWEST, page, cursors);
}

export function findQueryToken(
  store: TenantStore,
  extensionId: string,
  id: string,
): Promise<QueryTokenRow | undefined> {
  return extensionTokens(store, extensionId).select(COLUMNS).where('query_tokens.id', '=', id).executeTakeFirst();
}

type NewQueryToken = Omit<QueryTokenRow, 'agency_id' | 'created_at' | 'revoked_at' | 'last_used_at'> & {
  token_hash: string;
  created_at: Date;
};

export async function insertQueryToken(store: CommandStore, token: NewQueryToken): Promise<QueryTokenRow> {
  return store
    .insertInto('query_tokens')
    .values({ ...token, parameters: JSON.stringify(token.parameters) })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
}

/** Revokes an active or expired token once; a revoked one keeps its first revocation time. */
export async function revokeQueryToken(
  store: CommandStore,
  extensionId: string,
  id: string,
  at: Date,
): Promise<QueryTokenRow | undefined> {
  await store
    .updateTable('query_tokens')
    .set({ revoked_at: at })
    .where('extension_id', '=', extensionId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .execute();
  return findQueryToken(store, extensionId, id);
}
