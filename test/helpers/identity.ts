import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { createAgency } from '../../src/admin/agency.js';
import { createIntegration, type CreatedIntegration, type IntegrationInput } from '../../src/admin/integration.js';
import type { DB } from '../../src/db/schema.js';
import type { PhiMode } from '../../src/shared/principal.js';
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
  if (!existing) await createAgency(db, { id: agencyId, name: `Test agency ${agencyId}`, serviceZips: ['02108'] });
  return createIntegration(db, {
    name: 'Test integration',
    capabilities: [...CONTRACT_CAPABILITIES],
    phiModes: [...PHI_MODES],
    ...options,
    agencyId,
  });
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
