import type { Kysely } from 'kysely';
import { createAgency } from '../src/admin/agency.js';
import { createIntegration } from '../src/admin/integration.js';
import type { Config } from '../src/config.js';
import type { DB } from '../src/db/schema.js';
import { CONTRACT_CAPABILITIES, CONTRACT_SCOPES } from '../src/identity/grants.js';
import { loadKeyEncryption } from '../src/identity/key-encryption-keys.js';
import { ensureSigningKey, KeyRing } from '../src/identity/signing-keys.js';
import { TokenSigner } from '../src/identity/tokens.js';
import { tokenSettings } from '../src/services.js';

export interface BenchIdentity {
  /** One token, reused by every request of the "reused token" scenarios. */
  token: string;
  /** More distinct tokens than the verified-token cache holds, so each request verifies a signature. */
  freshTokens: string[];
}

/** Signs phi access tokens for one integration with the service's own key. */
type SignToken = () => Promise<string>;

/**
 * A fresh integration of the agency granted everything (phi included), with limits no benchmark
 * reaches. Runs before the service starts: the embedded store admits one process at a time.
 */
export async function benchIntegration(db: Kysely<DB>, config: Config, agencyId: string): Promise<SignToken> {
  const integration = await createIntegration(db, {
    agencyId,
    name: 'Bench',
    scopes: [...CONTRACT_SCOPES],
    capabilities: [...CONTRACT_CAPABILITIES],
    phiModes: ['phi'],
    rateLimitPerMinute: 1_000_000_000,
    dailyQuota: 2_000_000_000,
  });
  // The service's own key-encryption key (the same configuration), so both sign with the one signing key.
  const keys = loadKeyEncryption(config.secretsKey, (message) => console.error(message));
  await ensureSigningKey(db, keys, config.tokenTtlSeconds);
  const signer = new TokenSigner(new KeyRing(db, keys, config.tokenTtlSeconds), tokenSettings(config));
  const subject = { ...integration, phiMode: 'phi' as const, scopes: [...CONTRACT_SCOPES] };
  return async () => (await signer.sign(subject)).accessToken;
}

/** A new empty agency per run for the gateway scenarios, one reused token and `freshCount` distinct ones. */
export async function prepareBenchIdentity(db: Kysely<DB>, config: Config, freshCount: number): Promise<BenchIdentity> {
  const agencyId = `bench-${Date.now().toString(36)}`;
  await createAgency(db, { id: agencyId, name: 'Bench agency', serviceZips: ['02110'] });
  const sign = await benchIntegration(db, config, agencyId);
  const freshTokens: string[] = [];
  for (let i = 0; i < freshCount; i++) freshTokens.push(await sign());
  return { token: await sign(), freshTokens };
}
