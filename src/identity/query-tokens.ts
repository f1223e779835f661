import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { randomId } from '../shared/ids.js';
import type { Principal } from '../shared/principal.js';

/** Governed query tokens (`createQueryToken`): `qt_` and 32 random bytes in base64url, so a secret says what it is. */
const QUERY_TOKEN_PREFIX = 'qt_';

const QUERY_TOKEN_BEARER = /^bearer +qt_/i;

export function newQueryTokenSecret(): string {
  return randomId(QUERY_TOKEN_PREFIX, 32);
}

/**
 * What is stored of a secret: its SHA-256. The secret is 256 random bits, so a fast hash is safe (nothing to guess
 * from it) and a use costs one indexed lookup, not a key-derivation function.
 */
export function queryTokenHash(secret: string): string {
  return createHash('sha256').update(secret).digest('base64url');
}

/** Whether an Authorization header carries a query token rather than an access token (a JWT never starts with qt_). */
export function isQueryTokenAuthorization(authorization: string | undefined): boolean {
  return authorization !== undefined && QUERY_TOKEN_BEARER.test(authorization);
}

type QueryTokenLookup = { found: false } | { found: true; principal: Principal; revoked: boolean };

/**
 * Finds the token a secret belongs to, on every use: revocation and expiry take effect at once on every instance (no
 * cache to outlive them), for one primary-key-sized read next to the governed query the token runs. Its last use is
 * written at most once a minute.
 */
export class QueryTokenVerifier {
  constructor(private readonly db: Kysely<DB>) {}

  async lookup(secret: string, now = new Date()): Promise<QueryTokenLookup> {
    const row = await this.db
      .selectFrom('query_tokens')
      .select([
        'agency_id',
        'id',
        'extension_id',
        'query_id',
        'parameters',
        'phi_mode',
        'created_at',
        'expires_at',
        'revoked_at',
        'last_used_at',
      ])
      .where('token_hash', '=', queryTokenHash(secret))
      .executeTakeFirst();
    if (!row) return { found: false };
    if (
      row.revoked_at === null &&
      row.expires_at > now &&
      (row.last_used_at === null || now.getTime() - row.last_used_at.getTime() >= 60_000)
    ) {
      await this.db
        .updateTable('query_tokens')
        .set({ last_used_at: now })
        .where('agency_id', '=', row.agency_id)
        .where('id', '=', row.id)
        .execute();
    }
    const principal: Principal = {
      agencyId: row.agency_id,
      extensionId: row.extension_id,
      clientId: row.id,
      phiMode: row.phi_mode,
      scopes: QUERY_TOKEN_SCOPES,
      tokenId: row.id,
      issuedAt: row.created_at,
      expiresAt: row.expires_at,
      queryToken: { id: row.id, queryId: row.query_id, parameters: row.parameters },
    };
    return { found: true, principal, revoked: row.revoked_at !== null };
  }
}

/** A query token's only scope: the run route's (the query's own scope was checked against its creator's token). */
const QUERY_TOKEN_SCOPES: ReadonlySet<string> = new Set(['external:queries:run']);
