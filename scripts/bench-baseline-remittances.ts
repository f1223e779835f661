/**
 * The minimal live route the remittance allocation scenario is compared with (bench-remittances.ts): bare Fastify, the
 * same JWT verified with fast-jwt, and the same keyset select of a page of a payment's allocations in file order. No
 * summary, total, access rules, limits, metering, audit or contract shaping.
 */
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { openDatabase } from '../src/db/database.js';
import type { ClinicalBaselineConfig } from './bench-baseline-clinical.js';
import { authenticated, type Verify } from './bench-baseline-tokens.js';

const BASELINE_ALLOCATIONS_PATH = '/baseline/remittance-allocations';
const PAGE_SIZE = 50;

/** The page after the keyset (position, id) of the previous page's last allocation. */
export function baselineAllocationsPath(remittanceId: string, after: [number, string]): string {
  return `${BASELINE_ALLOCATIONS_PATH}?remittance_id=${remittanceId}&after=${Buffer.from(JSON.stringify(after)).toString('base64url')}`;
}

export async function registerRemittanceRoutes(
  app: FastifyInstance,
  config: ClinicalBaselineConfig,
  verify: Verify,
): Promise<void> {
  const database = await openDatabase({ databaseUrl: config.databaseUrl, poolMax: config.poolMax, migrate: false });
  app.addHook('onClose', () => database.close());
  app.get(
    BASELINE_ALLOCATIONS_PATH,
    authenticated(verify, async (agencyId, request) => {
      const { remittance_id: remittanceId, after } = request.query as { remittance_id: string; after: string };
      const [position, id] = JSON.parse(Buffer.from(after, 'base64url').toString('utf8')) as [number, string];
      const data = await database.db
        .selectFrom('remittance_allocations')
        .selectAll()
        .where('agency_id', '=', agencyId)
        .where('remittance_id', '=', remittanceId)
        .where(sql<boolean>`(position, id) > (${position}, ${id})`)
        .orderBy('position')
        .orderBy('id')
        .limit(PAGE_SIZE)
        .execute();
      return { data };
    }),
  );
}
