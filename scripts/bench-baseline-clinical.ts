/**
 * The minimal live routes the clinical scenarios are compared with: bare Fastify, the same JWT verified with
 * fast-jwt (bench-baseline-tokens.ts), and the least SQL that answers the same question. No access rules, limits,
 * metering, audit, idempotency or contract shaping.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { sql, type Kysely } from 'kysely';
import { openDatabase } from '../src/db/database.js';
import type { DB } from '../src/db/schema.js';
import { authenticated, type Verify } from './bench-baseline-tokens.js';

export interface ClinicalBaselineConfig {
  databaseUrl: string;
  /** The service's pool size, so both wait alike for a connection. */
  poolMax: number;
}

export const BASELINE_PATHS = { patients: '/baseline/patients', referrals: '/baseline/referrals' } as const;
export const BASELINE_PAGE_SIZE = 50;

/**
 * A list page path: at an offset, or after the keyset (last_name, first_name, id) of the previous page's last row,
 * optionally of the patients in one status.
 */
export function baselineListPath(
  page: { offset: number } | { after: [string, string, string] },
  status?: string,
): string {
  const query =
    'offset' in page
      ? `offset=${page.offset}`
      : `after=${Buffer.from(JSON.stringify(page.after)).toString('base64url')}`;
  return `${BASELINE_PATHS.patients}?${query}${status ? `&status=${status}` : ''}`;
}

function decodeAfter(after: string): [string, string, string] {
  return JSON.parse(Buffer.from(after, 'base64url').toString('utf8'));
}

/**
 * The patient row's own columns, not the chart copies that triggers keep on it (db/migrations/0011): the baseline
 * reads what a chart's row held before the service kept copies there, so the copies speed up the service alone.
 */
async function patientRowColumns(db: Kysely<DB>): Promise<(keyof DB['patients'])[]> {
  const { rows } = await sql<{ name: keyof DB['patients'] }>`
    select attname as name from pg_attribute
    where attrelid = 'patients'::regclass and attnum > 0 and not attisdropped and attname not in ('chart_coverages', 'chart_episodes')
    order by attnum`.execute(db);
  return rows.map((row) => row.name);
}

type BaselineListQuery = { offset?: string; after?: string; status?: DB['patients']['status'] };

function listPage(
  db: Kysely<DB>,
  columns: (keyof DB['patients'])[],
  agencyId: string,
  { offset = '0', after, status }: BaselineListQuery,
) {
  let query = db.selectFrom('patients').select(columns).where('agency_id', '=', agencyId);
  if (status) query = query.where('status', '=', status);
  if (after) {
    const [last, first, id] = decodeAfter(after);
    query = query.where(sql<boolean>`(last_name, first_name, id) > (${last}, ${first}, ${id})`);
  }
  return query
    .orderBy('last_name')
    .orderBy('first_name')
    .orderBy('id')
    .limit(BASELINE_PAGE_SIZE)
    .offset(Number(offset))
    .execute();
}

/**
 * One transaction of three inserts: the chart, the referral and its intake, into the service's own tables (their
 * indexes and foreign keys are part of any referral write), with only the columns the schema requires.
 */
async function recordReferral(db: Kysely<DB>, agencyId: string, body: Record<string, string>) {
  const ids = {
    patient_id: `pat_b${randomUUID()}`,
    referral_id: `ref_b${randomUUID()}`,
    intake_id: `int_b${randomUUID()}`,
  };
  const [first, last, now] = [body.patient_first_name, body.patient_last_name, new Date()];
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('patients')
      .values({
        agency_id: agencyId,
        id: ids.patient_id,
        first_name: first,
        last_name: last,
        dob: body.patient_dob,
        service_line: 'home_health',
        status: 'referred',
        match_first_name: first.toLowerCase(),
        match_last_name: last.toLowerCase(),
      })
      .execute();
    await trx
      .insertInto('referrals')
      .values({
        agency_id: agencyId,
        id: ids.referral_id,
        intake_id: ids.intake_id,
        patient_id: ids.patient_id,
        service_line: 'home_health',
        referral_type_category: 'soc',
        referral_date: now,
        disposition: 'accepted',
        request_shape: '2026-08-19',
      })
      .execute();
    await trx
      .insertInto('intakes')
      .values({
        agency_id: agencyId,
        id: ids.intake_id,
        referral_id: ids.referral_id,
        status: 'pending_review',
        received_at: now,
      })
      .execute();
  });
  return ids;
}

export async function registerClinicalRoutes(
  app: FastifyInstance,
  config: ClinicalBaselineConfig,
  verify: Verify,
): Promise<void> {
  const database = await openDatabase({ databaseUrl: config.databaseUrl, poolMax: config.poolMax, migrate: false });
  const { db } = database;
  app.addHook('onClose', () => database.close());
  const columns = await patientRowColumns(db);

  app.get(
    `${BASELINE_PATHS.patients}/:id`,
    authenticated(verify, async (agencyId, request, reply) => {
      const { id } = request.params as { id: string };
      const row = await db
        .selectFrom('patients')
        .select(columns)
        .where('agency_id', '=', agencyId)
        .where('id', '=', id)
        .executeTakeFirst();
      return row ? { data: row } : reply.code(404).send({ error: 'not_found' });
    }),
  );
  app.get(
    BASELINE_PATHS.patients,
    authenticated(verify, async (agencyId, request) => ({
      data: await listPage(db, columns, agencyId, request.query as BaselineListQuery),
    })),
  );
  app.post(
    BASELINE_PATHS.referrals,
    authenticated(verify, async (agencyId, request, reply) => {
      const ids = await recordReferral(db, agencyId, request.body as Record<string, string>);
      return reply.code(201).send({ data: ids });
    }),
  );
}
