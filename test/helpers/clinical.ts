import { seedDemoAgency, type SeedSummary } from '../../src/demo/seed.js';
import { signIn, type SignedInApi, type TestApi } from './app.js';
import { testDatabase } from './database.js';

export interface SeededAgency {
  agencyId: string;
  seed: SeedSummary;
  /** Sessions of two integrations granted everything: one with a phi token, one with a no_phi token. */
  phi: SignedInApi;
  noPhi: SignedInApi;
}

/**
 * A fresh agency filled with the small demo book of business (about 300 charts; a few seconds on PGlite).
 * For cross-agency checks, `signIn(api)` gives a session on another, empty agency.
 */
export async function seededAgency(api: TestApi): Promise<SeededAgency> {
  const phi = await signIn(api, { phiMode: 'phi' });
  const agencyId = phi.integration.agencyId;
  const seed = await seedDemoAgency((await testDatabase()).db, { agencyId, size: 'small' });
  return { agencyId, seed, phi, noPhi: await signIn(api, { phiMode: 'no_phi', integration: { agencyId } }) };
}
