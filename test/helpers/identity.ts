import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { openMainOffice } from '../../src/admin/agency.js';
import { addIntegration, type CreatedIntegration, type IntegrationInput } from '../../src/admin/integration.js';
import type { DB } from '../../src/db/schema.js';
import { CommandStore } from '../../src/db/tenant-store.js';
import type { PhiMode, Principal } from '../../src/shared/principal.js';
import { CONTRACT_CAPABILITIES, PHI_MODES } from '../../src/identity/grants.js';
import type { TestApi } from './app.js';

export type TestIntegration = CreatedIntegration;

export type TestIntegrationOptions = Partial<IntegrationInput>;

/**
 * A new integration on a fresh agency (or on `agencyId`, created when missing). Unlike the admin tool's
 * defaults it is granted every capability and both PHI modes; narrow them through the options.
 */
export async function createTestIntegration(
  db: Kysely<DB>,
  options: TestIntegrationOptions = {},
): Promise<TestIntegration> {
  const agencyId = options.agencyId ?? `agency-${randomBytes(6).toString('hex')}`;
  const existing = await db.selectFrom('agencies').select('id').where('id', '=', agencyId).executeTakeFirst();
  const name = `Test agency ${agencyId}`;
  if (!existing) await db.insertInto('agencies').values({ id: agencyId, name }).execute();
  return asFixture(db, agencyId, async (store) => {
    if (!existing) await openMainOffice(store, { id: agencyId, name, serviceZips: ['02108'] });
    return addIntegration(store, {
      name: 'Test integration',
      capabilities: [...CONTRACT_CAPABILITIES],
      phiModes: [...PHI_MODES],
      ...options,
    });
  });
}

/**
 * Writes an agency's fixture data through its store, as the admin commands do, but as no command: it leaves no audit
 * record, so that a test finds on the agency's audit trail its own calls only.
 */
function asFixture<T>(db: Kysely<DB>, agencyId: string, write: (store: CommandStore) => Promise<T>): Promise<T> {
  const trail = { resourceType: null, resourceIds: [] };
  return db
    .transaction()
    .execute((trx) => write(new CommandStore(trx, { agencyId, phiMode: 'phi' }, trail, undefined)));
}

export function tokenRequestBody(
  integration: TestIntegration,
  phiMode: PhiMode = 'no_phi',
  extra: Record<string, string> = {},
) {
  return {
    grant_type: 'client_credentials',
    client_id: integration.clientId,
    client_secret: integration.clientSecret,
    agency_id: integration.agencyId,
    phi_mode: phiMode,
    ...extra,
  };
}

/** An access token from the app's token endpoint (JSON body); fails loudly when none is issued. */
export async function issueTestToken(
  api: TestApi,
  integration: TestIntegration,
  phiMode: PhiMode = 'no_phi',
  scope?: string,
): Promise<string> {
  const res = await api.request({
    method: 'POST',
    url: '/api/v1/oauth/token',
    payload: tokenRequestBody(integration, phiMode, scope === undefined ? {} : { scope }),
  });
  if (res.statusCode !== 200) throw new Error(`token request failed: ${res.statusCode} ${res.body}`);
  return res.json().access_token as string;
}

/** The Authorization header for a token. */
export function bearer(token: string): { authorization: string } {
  return { authorization: `Bearer ${token}` };
}

/** The principal a token of `integration` would give, for a transport that authenticates by itself (direct calls). */
export function testPrincipal(integration: TestIntegration, phiMode: PhiMode, scopes: readonly string[]): Principal {
  const now = Date.now();
  return {
    agencyId: integration.agencyId,
    extensionId: integration.extensionId,
    clientId: integration.clientId,
    phiMode,
    scopes: new Set(scopes),
    tokenId: `tok_test_${randomUUID()}`,
    issuedAt: new Date(now - 1_000),
    expiresAt: new Date(now + 600_000),
  };
}
