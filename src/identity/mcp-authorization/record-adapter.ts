import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { errors, type Adapter, type AdapterPayload } from 'oidc-provider';
import type { DB } from '../../db/schema.js';
import { isStorableText } from '../../domain/storable-text.js';

/** Stored under this, never the value itself: a model's id is the bearer value (tokens, codes, session cookies). */
export const idHash = (id: string) => createHash('sha256').update(id).digest('base64url');

/**
 * oidc-provider's storage on our database (both engines), one row per model instance. The payload is kept without
 * its `jti` (the bearer value) and given it back on read. Clients are not stored here: they are the MCP clients an
 * administrator registered (mcp_clients), public and PKCE only.
 */
export class RecordAdapter implements Adapter {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly model: string,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn: number | undefined): Promise<void> {
    const { jti: _bearer, ...stored } = payload;
    const expiresAt = expiresIn ? new Date(Date.now() + expiresIn * 1000) : null;
    const row = {
      payload: JSON.stringify(stored),
      grant_id: payload.grantId ?? null,
      uid: payload.uid ?? null,
      expires_at: expiresAt,
    };
    await this.db
      .insertInto('mcp_authorization_records')
      .values({ model: this.model, id_hash: idHash(id), ...row })
      .onConflict((oc) => oc.columns(['model', 'id_hash']).doUpdateSet(row))
      .execute();
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    // Client ids and uids are looked up as sent: one no row can hold (a NUL) is unknown, not a failed query.
    if (this.model === 'Client') return isStorableText(id) ? this.client(id) : undefined;
    return this.found(await this.live().where('id_hash', '=', idHash(id)).executeTakeFirst(), id);
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    if (!isStorableText(uid)) return undefined;
    const row = await this.live().where('uid', '=', uid).executeTakeFirst();
    return row && this.found(row, (row.payload.jti as string | undefined) ?? undefined);
  }

  async findByUserCode(): Promise<AdapterPayload | undefined> {
    return undefined; // The device flow is not enabled.
  }

  /**
   * Marks a code or refresh token used in one conditional statement, so that of presentations at the same moment, on
   * any process, one alone gets on. oidc-provider checks `consumed` before calling this; a presentation that passed
   * that check and finds the mark already set is reuse all the same: its grant is revoked and the exchange refused.
   */
  async consume(id: string): Promise<void> {
    const marked = await this.db
      .updateTable('mcp_authorization_records')
      .set({ consumed_at: sql<Date>`now()` })
      .where('model', '=', this.model)
      .where('id_hash', '=', idHash(id))
      .where('consumed_at', 'is', null)
      .returning('id_hash')
      .executeTakeFirst();
    if (marked) return;
    await this.revokeGrantOf(id);
    throw new errors.InvalidGrant('the code or refresh token was already used');
  }

  async destroy(id: string): Promise<void> {
    await this.db
      .deleteFrom('mcp_authorization_records')
      .where('model', '=', this.model)
      .where('id_hash', '=', idHash(id))
      .execute();
  }

  /** A grant's every artifact of this model: a refresh token's reuse revokes the whole family this way. */
  async revokeByGrantId(grantId: string): Promise<void> {
    await this.db
      .deleteFrom('mcp_authorization_records')
      .where('model', '=', this.model)
      .where('grant_id', '=', grantId)
      .execute();
  }

  /**
   * The grant of this model's record `id` and its every artifact. Deleting the grant itself is what refuses the tokens
   * a racing exchange may still save after this: a token is valid only while its grant exists (verifyMcpAccessToken).
   */
  private async revokeGrantOf(id: string): Promise<void> {
    const record = await this.db
      .selectFrom('mcp_authorization_records')
      .select('grant_id')
      .where('model', '=', this.model)
      .where('id_hash', '=', idHash(id))
      .executeTakeFirst();
    const grantId = record?.grant_id;
    if (!grantId) return;
    await this.db
      .deleteFrom('mcp_authorization_records')
      .where((eb) =>
        eb.or([eb('grant_id', '=', grantId), eb.and([eb('model', '=', 'Grant'), eb('id_hash', '=', idHash(grantId))])]),
      )
      .execute();
  }

  private live() {
    return this.db
      .selectFrom('mcp_authorization_records')
      .select(['payload', 'consumed_at'])
      .where('model', '=', this.model)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', sql<Date>`now()`)]));
  }

  private found(
    row: { payload: Record<string, unknown>; consumed_at: Date | null } | undefined,
    id: string | undefined,
  ): AdapterPayload | undefined {
    if (!row) return undefined;
    const payload: AdapterPayload = { ...row.payload };
    if (id !== undefined) payload.jti = id;
    if (row.consumed_at) payload.consumed = Math.floor(row.consumed_at.getTime() / 1000);
    return payload;
  }

  private async client(clientId: string): Promise<AdapterPayload | undefined> {
    const client = await this.db
      .selectFrom('mcp_clients')
      .select(['client_id', 'name', 'redirect_uris'])
      .where('client_id', '=', clientId)
      .where('status', '=', 'active')
      .executeTakeFirst();
    if (!client) return undefined;
    return {
      client_id: client.client_id,
      client_name: client.name,
      redirect_uris: client.redirect_uris,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
}
