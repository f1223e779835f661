import { randomId } from '../../shared/ids.js';
import { PlatformError, invalidInput } from '../../shared/platform-error.js';
import { queryTokenRefusal } from '../../domain/access-policy.js';
import { newQueryTokenSecret, queryTokenHash } from '../../identity/query-tokens.js';
import { resourceNotFound, type Handler } from '../handler.js';
import { queryNotFound, type QueryRegistry } from '../queries/query-registry.js';
import {
  findQueryToken,
  insertQueryToken,
  listQueryTokenPage,
  revokeQueryToken,
  statusOf,
} from './query-token-repository.js';
import { queryTokenView } from './query-token-view.js';
import { excelTemplate, templateFileName } from './excel-templates.js';

const DAY_MS = 86_400_000;
const DEFAULT_LIFETIME_DAYS = 90;

/** expires_at: default 90 days ahead; in the future and at most a year ahead. */
function expiryOf(sent: string | undefined, now: Date): Date {
  if (sent === undefined) return new Date(now.getTime() + DEFAULT_LIFETIME_DAYS * DAY_MS);
  const at = new Date(sent);
  const latest = new Date(now);
  latest.setUTCFullYear(now.getUTCFullYear() + 1);
  if (at <= now || at > latest)
    throw invalidInput(
      'expires_at',
      `expires_at must be after now and at most one year ahead (by ${latest.toISOString()}); it was ${sent}.`,
    );
  return at;
}

export function queryTokenHandlers(registry: QueryRegistry, publicBaseUrl: string) {
  const createQueryToken: Handler<'createQueryToken'> = async (ctx) => {
    const { principal, store, body } = ctx;
    const query = registry.get(body.query_id);
    if (!query) throw queryNotFound(body.query_id);
    const phiMode = body.phi_mode ?? 'no_phi';
    const refusal = queryTokenRefusal(query, principal, ctx.policy, phiMode);
    if (refusal) throw refusal;
    const parameters = registry.parameters(query, body.parameters ?? {});
    const now = new Date();
    const secret = newQueryTokenSecret();
    const row = await insertQueryToken(store, {
      id: randomId('qtk_'),
      extension_id: principal.extensionId,
      name: body.name,
      query_id: query.id,
      parameters,
      phi_mode: phiMode,
      token_hash: queryTokenHash(secret),
      token_hint: secret.slice(-4),
      created_at: now,
      expires_at: expiryOf(body.expires_at, now),
    });
    return { data: { ...queryTokenView(row, now), token: secret } };
  };

  const listQueryTokens: Handler<'listQueryTokens'> = async (ctx) => {
    const { rows, meta } = await listQueryTokenPage(
      ctx.store,
      ctx.principal.extensionId,
      ctx.query.status,
      ctx.query,
      ctx.cursors,
    );
    const now = new Date();
    return { data: rows.map((row) => queryTokenView(row, now)), meta };
  };

  const revokeQueryTokenHandler: Handler<'revokeQueryToken'> = async (ctx) => {
    const row = await revokeQueryToken(ctx.store, ctx.principal.extensionId, ctx.params.id, new Date());
    if (!row) throw resourceNotFound('query token', ctx.params.id);
    return { data: queryTokenView(row, new Date()) };
  };

  const getQueryTokenExcelTemplate: Handler<'getQueryTokenExcelTemplate'> = async (ctx) => {
    const row = await findQueryToken(ctx.store, ctx.principal.extensionId, ctx.params.id);
    if (!row) throw resourceNotFound('query token', ctx.params.id);
    const status = statusOf(row, new Date());
    if (status !== 'active') {
      throw new PlatformError(
        'PLATFORM_CONFLICT',
        `Query token ${row.id} is ${status}; a template for it could not run. Create a new token (POST /api/v1/ext/query-tokens).`,
        { id: row.id, status },
      );
    }
    const query = registry.get(row.query_id);
    if (!query) throw queryNotFound(row.query_id);
    const type = ctx.params.templateType;
    ctx.response.header('content-disposition', `attachment; filename="${templateFileName(row, type)}"`);
    return excelTemplate(type, { token: row, query, baseUrl: publicBaseUrl });
  };

  return { createQueryToken, listQueryTokens, revokeQueryToken: revokeQueryTokenHandler, getQueryTokenExcelTemplate };
}
