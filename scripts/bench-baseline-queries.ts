/**
 * The minimal live route the governed query scenarios are compared with (bench-queries.ts): bare Fastify, the same JWT
 * verified with fast-jwt, and the same SQL as the service's run (the query's page in its keyset order under the
 * run's statement timeout, queryPage), its rows as JSON. No parameter validation, access rules, limits, cursor,
 * column check, no_phi reduction, metering, audit or contract shaping.
 */
import type { FastifyInstance } from 'fastify';
import { openDatabase } from '../src/db/database.js';
import { TenantStore } from '../src/db/tenant-store.js';
import { GOVERNED_QUERIES } from '../src/resources/queries/governed-queries.js';
import { queryPage } from '../src/resources/queries/query-run.js';
import type { ClinicalBaselineConfig } from './bench-baseline-clinical.js';
import { authenticated, type Verify } from './bench-baseline-tokens.js';

export const BASELINE_QUERIES_PATH = '/baseline/queries';

export async function registerQueryRoutes(
  app: FastifyInstance,
  config: ClinicalBaselineConfig,
  verify: Verify,
): Promise<void> {
  const database = await openDatabase({ databaseUrl: config.databaseUrl, poolMax: config.poolMax, migrate: false });
  app.addHook('onClose', () => database.close());
  app.post(
    `${BASELINE_QUERIES_PATH}/:queryId`,
    authenticated(verify, async (agencyId, request, reply) => {
      const query = GOVERNED_QUERIES.find((q) => q.id === (request.params as { queryId: string }).queryId);
      if (!query) return reply.code(404).send({ error: 'not_found' });
      const { limit = 100 } = (request.body ?? {}) as { limit?: number };
      const store = new TenantStore(database.db, { agencyId, phiMode: 'phi' }, { resourceType: null, resourceIds: [] });
      const rows = await queryPage(store, query, {}, new Date(), undefined, limit);
      return { data: { rows: rows.slice(0, limit) } };
    }),
  );
}
