import { randomId } from '../../shared/ids.js';
import { PlatformError, invalidInput } from '../../shared/platform-error.js';
import { newQueryTokenSecret, queryTokenHash } from '../../identity/query-tokens.js';
import { resourceNotFound, type Handler } from '../handler.js';
import { queryNotFound, type QueryRegistry } from '../queries/query-registry.js';
import { extensionGrants, findQueryToken, insertQueryToken, listQueryTokenPage, revokeQueryToken, statusOf } from './query-token-repository.js';
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
  if (at <= now || at > latest) throw invalidInput('expires_at', `expires_at must be after now and at most one year ahead (by ${latest.toISOString()}); it was ${sent}.`);
  return at;
}

const notAllowed = (message: string, details: Record<string, string>) => new PlatformError('PLATFORM_QUERY_NOT_ALLOWED', message, details);

export function queryTokenHandlers(registry: QueryRegistry, publicBaseUrl: string) {
  const createQueryToken: Handler<'createQueryToken'> = async (ctx) => {
    const { principal, store, body } = ctx;
    const query = registry.get(body.query_id);
    if (!query) throw queryNotFound(body.query_id);
    const grants = await extensionGrants(store, principal.extensionId);
    // A query token never reaches further than the token and the policy that created it.
    for (const scope of ['external:queries:run', query.scope]) {
      if (!principal.scopes.has(scope)) throw notAllowed(`A token for ${query.id} needs the scope ${scope}, which this access token does not carry.`, { query_id: query.id, required_scope: scope });
    }
    for (const capability of ['queries.run', query.capability]) {
      if (!grants.capabilities.includes(capability)) {
        throw notAllowed(`The agency's extension policy does not permit ${capability}, which ${query.id} needs. An agency administrator can grant it.`, { query_id: query.id, capability });
      }
    }
    const phiMode = body.phi_mode ?? 'no_phi';
    if (phiMode === 'phi' && (principal.phiMode !== 'phi' || !grants.phi_modes.includes('phi'))) {
      throw new PlatformError('PLATFORM_PHI_MODE_DENIED', 'A phi query token can be created only from a phi session of an integration permitted phi.', { phi_mode: phiMode });
    }
    if (phiMode === 'no_phi' && query.noPhiDenied) {
      throw new PlatformError('PLATFORM_PHI_MODE_DENIED', `${query.id} is available in phi sessions only; create a phi token.`, { phi_mode: phiMode, query_id: query.id });
    }
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
    const { rows, meta } = await listQueryTokenPage(ctx.store, ctx.principal.extensionId, ctx.query.status, ctx.query, ctx.cursors);
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
      throw new PlatformError('PLATFORM_CONFLICT', `Query token ${row.id} is ${status}; a template for it could not run. Create a new token (POST /api/v1/ext/query-tokens).`, { id: row.id, status });
    }
    const query = registry.get(row.query_id);
    if (!query) throw queryNotFound(row.query_id);
    const type = ctx.params.templateType;
    ctx.response.header('content-disposition', `attachment; filename="${templateFileName(row, type)}"`);
    return excelTemplate(type, { token: row, query, baseUrl: publicBaseUrl });
  };

  return { createQueryToken, listQueryTokens, revokeQueryToken: revokeQueryTokenHandler, getQueryTokenExcelTemplate };
}
