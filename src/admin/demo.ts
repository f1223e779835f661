import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { operations } from '../generated/contract.js';
import { CONTRACT_CAPABILITIES, CONTRACT_SCOPES, PHI_MODES } from '../identity/grants.js';
import { createAgency } from './agency.js';
import { createIntegration, type CreatedIntegration } from './integration.js';
import { createUser, type CreatedUser } from './user.js';
import { AdminError, describe, requiredOption, stringOption, type Commands } from './command.js';
import { seedDemoAgency, type DemoSize, type SeedSummary } from '../demo/seed.js';

interface DemoCredentials extends CreatedIntegration {
  /** Ready to paste: asks for a no_phi token. */
  curl: string;
  seed: SeedSummary;
  /** The agency console's administrator, whose initial password is replaced at the first sign-in. */
  administrator: CreatedUser;
  consoleUrl: string;
}

/** The demo agency's console administrator. */
export const DEMO_ADMINISTRATOR = {
  email: 'admin@harborview.example',
  name: 'Dana Whitfield',
  role: 'administrator',
} as const;

export const DEMO_AGENCY = {
  id: 'demo',
  name: 'Harborview Home Health & Hospice',
  // Beacon Hill, Back Bay, Jamaica Plain, Dorchester, Cambridge, Brookline.
  serviceZips: ['02108', '02116', '02130', '02124', '02139', '02446'],
};

/** On an empty database (no agency), a seeded demo agency and an integration granted everything; undefined otherwise. */
export async function ensureDemo(db: Kysely<DB>, baseUrl: string): Promise<DemoCredentials | undefined> {
  const anyAgency = await db.selectFrom('agencies').select('id').limit(1).executeTakeFirst();
  if (anyAgency) return undefined;
  await createAgency(db, DEMO_AGENCY, 'demo-seed');
  // Before the seed, which shares a working collection with the agency's integrations as editors.
  const integration = await createIntegration(
    db,
    {
      agencyId: DEMO_AGENCY.id,
      name: 'Demo integration',
      scopes: [...CONTRACT_SCOPES],
      capabilities: [...CONTRACT_CAPABILITIES],
      phiModes: [...PHI_MODES],
    },
    'demo-seed',
  );
  const seed = await seedDemoAgency(db, { agencyId: DEMO_AGENCY.id, size: 'small' });
  const body = JSON.stringify({
    grant_type: 'client_credentials',
    client_id: integration.clientId,
    client_secret: integration.clientSecret,
    agency_id: integration.agencyId,
    phi_mode: 'no_phi',
  });
  const curl = `curl -s ${baseUrl}${operations.issueToken.path} -H 'content-type: application/json' -d '${body}'`;
  const administrator = await createUser(db, { agencyId: DEMO_AGENCY.id, ...DEMO_ADMINISTRATOR }, 'demo-seed');
  return { ...integration, curl, seed, administrator, consoleUrl: `${baseUrl}/console/` };
}

export function describeDemo(demo: DemoCredentials): string {
  return [
    '',
    '=== Demo agency created (empty database) ===',
    `agency_id:      ${demo.agencyId} (${demo.seed.rows.patients} patients, ${demo.seed.rows.referrals} referrals, ${demo.seed.rows.visits} visits)`,
    `client_id:      ${demo.clientId}`,
    `client_secret:  ${demo.clientSecret}   (shown only now)`,
    'Get a token:',
    `  ${demo.curl}`,
    `Agency console: ${demo.consoleUrl}`,
    `  email ${demo.administrator.email}, initial password ${demo.administrator.initialPassword}   (shown only now; choose your own at the first sign-in)`,
    '',
  ].join('\n');
}

const SIZES: readonly DemoSize[] = ['small', 'large'];

function sizeOption(options: Record<string, string | boolean | undefined>): DemoSize {
  const size = stringOption(options, 'size') ?? 'small';
  if (!SIZES.includes(size as DemoSize))
    throw new AdminError(`--size must be one of ${SIZES.join(', ')}, got "${size}"`);
  return size as DemoSize;
}

export const demoCommands: Commands = {
  seed: {
    usage: 'demo seed --agency ID [--size small|large]   (small: about 300 patients; large: 100,000)',
    options: { agency: { type: 'string' }, size: { type: 'string' } },
    async run({ db, options, outbox }) {
      const summary = await seedDemoAgency(db, {
        agencyId: requiredOption(options, 'agency'),
        size: sizeOption(options),
        outbox,
      });
      const json = {
        agency_id: summary.agencyId,
        size: summary.size,
        now: summary.now,
        offices_created: summary.officesCreated,
        rows: summary.rows,
      };
      return {
        json,
        text: `Demo data seeded.\n${describe({ agency: summary.agencyId, size: summary.size, dates_relative_to: summary.now, offices_created: summary.officesCreated, ...summary.rows })}`,
      };
    },
  },
};
