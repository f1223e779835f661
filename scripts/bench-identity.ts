import { createAgency } from '../src/admin/agency.js';
import { createIntegration } from '../src/admin/integration.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { CONTRACT_CAPABILITIES, CONTRACT_SCOPES } from '../src/identity/grants.js';
import { ensureSigningKey, KeyRing } from '../src/identity/signing-keys.js';
import { TokenSigner } from '../src/identity/tokens.js';
import { tokenSettings } from '../src/services.js';

export interface BenchIdentity {
  /** One token, reused by every request of the "reused token" scenarios. */
  token: string;
  /** More distinct tokens than the verified-token cache holds, so each request verifies a signature. */
  freshTokens: string[];
}

/**
 * Before the service starts (the embedded store admits one process at a time): an agency and an
 * integration with limits no benchmark reaches, and tokens signed with the service's own key.
 */
export async function prepareBenchIdentity(env: NodeJS.ProcessEnv, freshCount: number): Promise<BenchIdentity> {
  const config = loadConfig(env);
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    const agencyId = `bench-${Date.now().toString(36)}`;
    await createAgency(database.db, { id: agencyId, name: 'Bench agency', serviceZips: ['02110'] });
    const integration = await createIntegration(database.db, {
      agencyId, name: 'Bench', scopes: [...CONTRACT_SCOPES], capabilities: [...CONTRACT_CAPABILITIES], phiModes: ['phi'],
      rateLimitPerMinute: 1_000_000_000, dailyQuota: 2_000_000_000,
    });
    await ensureSigningKey(database.db, config.tokenTtlSeconds);
    const signer = new TokenSigner(new KeyRing(database.db, config.tokenTtlSeconds), tokenSettings(config));
    const subject = { ...integration, phiMode: 'phi' as const, scopes: [...CONTRACT_SCOPES] };
    const sign = async () => (await signer.sign(subject)).accessToken;
    const freshTokens: string[] = [];
    for (let i = 0; i < freshCount; i++) freshTokens.push(await sign());
    return { token: await sign(), freshTokens };
  } finally {
    await database.close();
  }
}
