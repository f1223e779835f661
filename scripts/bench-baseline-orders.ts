/**
 * The minimal live route the physician order scenarios are compared with (bench-orders.ts): bare Fastify, the same
 * JWT verified with fast-jwt, and one select of a page of the agency's orders, newest first, with the physician's name.
 * No aging, total, summary, access rules, limits, metering, audit or contract shaping.
 */
import type { FastifyInstance } from 'fastify';
import { sql, type Kysely } from 'kysely';
import { openDatabase } from '../src/db/database.js';
import type { DB } from '../src/db/schema.js';
import type { ClinicalBaselineConfig } from './bench-baseline-clinical.js';
import { authenticated, type Verify } from './bench-baseline-tokens.js';

const BASELINE_ORDERS_PATH = '/baseline/physician-orders';
const PAGE_SIZE = 50;

/** A page path: at an offset, or after the keyset (created_at, id) of the previous page's last order. */
export function baselineOrdersPath(page: { offset: number } | { after: [string, string] }): string {
  const query =
    'offset' in page
      ? `offset=${page.offset}`
      : `after=${Buffer.from(JSON.stringify(page.after)).toString('base64url')}`;
  return `${BASELINE_ORDERS_PATH}?${query}`;
}

function ordersPage(db: Kysely<DB>, agencyId: string, { offset = '0', after }: { offset?: string; after?: string }) {
  let query = db
    .selectFrom('physician_orders as o')
    .innerJoin('physicians as p', (join) =>
      join.onRef('p.agency_id', '=', 'o.agency_id').onRef('p.id', '=', 'o.physician_id'),
    )
    .select([
      'o.id',
      'o.order_type',
      'o.patient_id',
      'o.physician_id',
      'o.office_id',
      'o.signature_status',
      'o.delivery_method',
      'o.sent_at',
      'o.signed_at',
      'o.received_at',
      'o.created_at',
      'p.npi',
      'p.first_name',
      'p.last_name',
    ])
    .where('o.agency_id', '=', agencyId);
  if (after) {
    const [createdAt, id] = JSON.parse(Buffer.from(after, 'base64url').toString('utf8')) as [string, string];
    query = query.where(sql<boolean>`(o.created_at, o.id) < (${createdAt}::timestamptz, ${id})`);
  }
  return query
    .orderBy('o.created_at', 'desc')
    .orderBy('o.id', 'desc')
    .limit(PAGE_SIZE)
    .offset(Number(offset))
    .execute();
}

export async function registerOrderRoutes(
  app: FastifyInstance,
  config: ClinicalBaselineConfig,
  verify: Verify,
): Promise<void> {
  const database = await openDatabase({ databaseUrl: config.databaseUrl, poolMax: config.poolMax, migrate: false });
  app.addHook('onClose', () => database.close());
  app.get(
    BASELINE_ORDERS_PATH,
    authenticated(verify, async (agencyId, request) => ({
      data: await ordersPage(database.db, agencyId, request.query as { offset?: string; after?: string }),
    })),
  );
}
