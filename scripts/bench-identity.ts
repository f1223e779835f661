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
import { BenchTokens, type IssuedTokens } from './bench-credentials.js';

export interface BenchIdentity {
  /** One token, reused by every request of the "reused token" scenarios. */
  token: BenchTokens;
  /** More distinct tokens than the verified-token cache holds, so each request verifies a signature. */
  freshTokens: BenchTokens;
}

/** Signs `count` phi access tokens for one integration with the service's own key. */
export type SignTokens = (count: number) => Promise<IssuedTokens>;

type SigningKey = Awaited<ReturnType<KeyRing['signingKey']>>;

/**
 * The service's signing key as it was while the bench prepared: the bench signs (renews) tokens all through a run
 * without a database connection, which the embedded store, admitting one process, could not give it.
 */
class HeldKeyRing extends KeyRing {
  constructor(
    private readonly key: SigningKey,
    ...ring: ConstructorParameters<typeof KeyRing>
  ) {
    super(...ring);
  }

  override async signingKey(): Promise<SigningKey> {
    return this.key;
  }
}

/**
 * A fresh integration of the agency granted everything (phi included), with limits no benchmark
 * reaches. Runs before the service starts: the embedded store admits one process at a time.
 */
export async function benchIntegration(db: Kysely<DB>, config: Config, agencyId: string): Promise<SignTokens> {
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
  const key = await new KeyRing(db, keys, config.tokenTtlSeconds).signingKey();
  const signer = new TokenSigner(new HeldKeyRing(key, db, keys, config.tokenTtlSeconds), tokenSettings(config));
  const subject = { ...integration, phiMode: 'phi' as const, scopes: [...CONTRACT_SCOPES] };
  return async (count) => {
    // Read before signing: never later than the tokens' own exp.
    const expiresAtMs = Date.now() + config.tokenTtlSeconds * 1000;
    const tokens: string[] = [];
    for (let i = 0; i < count; i++) tokens.push((await signer.sign(subject)).accessToken);
    return { tokens, expiresAtMs };
  };
}

/** One phi access token of a bench integration, renewed by signing another. */
export function reusedToken(sign: SignTokens, what: string): Promise<BenchTokens> {
  return BenchTokens.issue(what, () => sign(1));
}

/** A new empty agency per run for the gateway scenarios, one reused token and `freshCount` distinct ones. */
export async function prepareBenchIdentity(db: Kysely<DB>, config: Config, freshCount: number): Promise<BenchIdentity> {
  const agencyId = `bench-${Date.now().toString(36)}`;
  await createAgency(db, { id: agencyId, name: 'Bench agency', serviceZips: ['02110'] });
  const sign = await benchIntegration(db, config, agencyId);
  return {
    token: await reusedToken(sign, `the reused token of ${agencyId}`),
    freshTokens: await BenchTokens.issue(`the ${freshCount} fresh tokens of ${agencyId}`, () => sign(freshCount)),
  };
}
