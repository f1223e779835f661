import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { randomId } from '../shared/ids.js';
import { AdminError, describe, requiredOption, type Commands } from './command.js';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * A redirect URI is matched exactly (OAuth 2.1): https, or http on the loopback interface for native apps
 * (RFC 8252 7.3), never a fragment.
 */
function checkRedirectUri(uri: string): void {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new AdminError(`--redirect-uri "${uri}" is not an absolute URL`);
  }
  if (url.hash) throw new AdminError(`--redirect-uri "${uri}" must not have a fragment`);
  if (url.protocol === 'https:') return;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return;
  throw new AdminError(`--redirect-uri "${uri}" must use https (or http on 127.0.0.1, [::1] or localhost)`);
}

interface CreatedMcpClient {
  clientId: string;
  name: string;
  redirectUris: string[];
}

/** A public MCP client (no secret: PKCE S256 protects its codes), usable by people of every agency. */
export async function createMcpClient(db: Kysely<DB>, name: string, redirectUris: string[]): Promise<CreatedMcpClient> {
  if (!name.trim()) throw new AdminError('--name must not be empty');
  if (redirectUris.length === 0) throw new AdminError('--redirect-uri is required (repeat it for several)');
  redirectUris.forEach(checkRedirectUri);
  const clientId = randomId('mcp_');
  await db
    .insertInto('mcp_clients')
    .values({ client_id: clientId, name: name.trim(), redirect_uris: redirectUris })
    .execute();
  return { clientId, name: name.trim(), redirectUris };
}

export const mcpClientCommands: Commands = {
  create: {
    usage: 'mcp-client create --name NAME --redirect-uri URI [--redirect-uri URI ...]',
    options: { name: { type: 'string' }, 'redirect-uri': { type: 'string', multiple: true } },
    async run({ db, options }) {
      const uris = (options['redirect-uri'] as unknown as string[] | undefined) ?? [];
      const client = await createMcpClient(db, requiredOption(options, 'name'), uris);
      const json = {
        client_id: client.clientId,
        name: client.name,
        redirect_uris: client.redirectUris,
        token_endpoint_auth_method: 'none',
      };
      return { json, text: `MCP client registered (public: PKCE S256, exact redirect URIs).\n${describe(json)}` };
    },
  },
  list: {
    usage: 'mcp-client list',
    options: {},
    async run({ db }) {
      const clients = await db
        .selectFrom('mcp_clients')
        .select(['client_id', 'name', 'redirect_uris', 'status', 'created_at'])
        .orderBy('created_at')
        .execute();
      const rows = clients.map((c) => ({
        client_id: c.client_id,
        name: c.name,
        redirect_uris: c.redirect_uris,
        status: c.status,
        created_at: c.created_at.toISOString(),
      }));
      return {
        json: { clients: rows },
        text: rows.length === 0 ? 'No MCP clients.' : rows.map((row) => describe(row)).join('\n\n'),
      };
    },
  },
  disable: {
    usage: 'mcp-client disable --client-id ID',
    options: { 'client-id': { type: 'string' } },
    async run({ db, options }) {
      const clientId = requiredOption(options, 'client-id');
      const updated = await db.transaction().execute(async (trx) => {
        const row = await trx
          .updateTable('mcp_clients')
          .set({ status: 'disabled' })
          .where('client_id', '=', clientId)
          .returning('client_id')
          .executeTakeFirst();
        // Its grants go with it: every token and code issued to the client stops working now.
        if (row)
          await trx
            .deleteFrom('mcp_authorization_records')
            .where(({ eb, ref }) => eb(ref('payload', '->>').key('clientId' as never), '=', clientId))
            .execute();
        return row;
      });
      if (!updated) throw new AdminError(`no MCP client "${clientId}"`);
      return {
        json: { client_id: clientId, status: 'disabled' },
        text: 'MCP client disabled: it can no longer sign anyone in, and its tokens are revoked.',
      };
    },
  },
};
