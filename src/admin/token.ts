import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { describe, requiredOption, type Commands } from './command.js';
import { onIntegrationOf } from './integration.js';

/**
 * Revokes one token by its jti. The row is kept until the latest moment the token can expire (a token is at
 * most the configured lifetime old), then it is swept.
 */
export function revokeToken(db: Kysely<DB>, clientId: string, jti: string, tokenTtlSeconds: number) {
  return onIntegrationOf(db, clientId, 'revokeToken', async (store, ref) => {
    // The agency's own expired revocations: readers ignore expired rows, so another agency's wait for its next one.
    await store.deleteFrom('revoked_tokens').where('expires_at', '<=', sql<Date>`now()`).execute();
    const row = await store
      .insertInto('revoked_tokens')
      .values({ jti, extension_id: ref.extensionId, expires_at: new Date(Date.now() + tokenTtlSeconds * 1000) })
      .onConflict((oc) => oc.column('jti').doUpdateSet({ expires_at: (eb) => eb.ref('excluded.expires_at') }))
      .returning('expires_at')
      .executeTakeFirstOrThrow();
    store.auditDetails({ jti });
    return { ...ref, jti, keptUntil: row.expires_at };
  });
}

export const tokenCommands: Commands = {
  revoke: {
    usage: 'token revoke --jti JTI --client-id ID',
    options: { jti: { type: 'string' }, 'client-id': { type: 'string' } },
    async run({ db, config, options }) {
      const revoked = await revokeToken(
        db,
        requiredOption(options, 'client-id'),
        requiredOption(options, 'jti'),
        config.tokenTtlSeconds,
      );
      const json = {
        jti: revoked.jti,
        client_id: revoked.clientId,
        agency_id: revoked.agencyId,
        extension_id: revoked.extensionId,
        kept_until: revoked.keptUntil.toISOString(),
      };
      return { json, text: `Token revoked.\n${describe(json)}` };
    },
  },
};
