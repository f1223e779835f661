import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { sql, type Kysely } from 'kysely';
import t from 'tap';
import type { DB } from '../../src/db/schema.js';
import { DEMO_REFERENCE_NOW, seedDemoAgency, type SeedSummary } from '../../src/demo/seed.js';
import { testDatabase } from '../helpers/database.js';
import { orderAging } from '../../src/domain/physician-orders/aging.js';

const { db } = await testDatabase();
const contract = JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8'));

const SERVICE_ZIPS = [
  '60601',
  '60602',
  '60603',
  '60604',
  '60605',
  '60606',
  '60607',
  '60608',
  '60609',
  '60610',
  '60611',
  '60612',
];
const DAY_MS = 86_400_000;

/** What the admin tool leaves behind: an agency, its main office and its service ZIPs. */
async function createAgency(db: Kysely<DB>, zips = SERVICE_ZIPS): Promise<string> {
  const id = `agy_${randomUUID()}`;
  await db.insertInto('agencies').values({ id, name: 'Seed Test Home Health' }).execute();
  await db
    .insertInto('offices')
    .values({ agency_id: id, id: 'off_main', name: 'Main Office', timezone: 'America/Chicago' })
    .execute();
  if (zips.length > 0) {
    await db
      .insertInto('agency_service_zips')
      .values(zips.map((zip_code) => ({ agency_id: id, zip_code, office_id: 'off_main' })))
      .execute();
  }
  return id;
}

function enumOf(schema: string, property: string): string[] {
  return contract.components.schemas[schema].properties[property].enum.filter((v: unknown) => v !== null);
}

async function distinct(table: keyof DB & string, column: string, agencyId: string): Promise<string[]> {
  const rows = await db
    .selectFrom(table as 'patients')
    .select((eb) => eb.ref(column as 'status').as('value'))
    .distinct()
    .where('agency_id', '=', agencyId)
    .execute();
  return rows.map((r) => String(r.value)).sort();
}

/** A demo id (`pat_` + 16 base-32 characters), wherever it appears, JSON values included. */
const DEMO_ID = /\b[a-z]{3}_[0-9a-hjkmnp-tv-z]{16}\b/g;

/** Every seeded row of a table without its agency_id and with its ids blanked, as JSON (so Dates compare by value). */
async function rowsOf(table: keyof SeedSummary['rows'], agencyId: string): Promise<string[]> {
  const rows = await db.selectFrom(table).selectAll().where('agency_id', '=', agencyId).execute();
  return rows.map(({ agency_id: _, ...row }) => JSON.stringify(row).replace(DEMO_ID, '<id>')).sort();
}

/** Every id of the agency, in every table that has an agency_id and an id column (read from the schema). */
async function idsOf(agencyId: string): Promise<Set<string>> {
  const { rows: tables } = await sql<{ table_name: string }>`
    select table_name from information_schema.columns
    where table_schema = current_schema() and column_name in ('agency_id', 'id')
    group by table_name having count(*) = 2 order by table_name`.execute(db);
  const ids = new Set<string>();
  for (const { table_name } of tables) {
    const { rows } = await sql<{
      id: string;
    }>`select id::text as id from ${sql.table(table_name)} where agency_id = ${agencyId}`.execute(db);
    for (const { id } of rows) ids.add(`${table_name}.${id}`);
  }
  return ids;
}

const agencyA = await createAgency(db);
const agencyB = await createAgency(db);
// The agencies' own set-up (their main office), which the demo did not make.
const setUp = await idsOf(agencyA);
const summaryA = await seedDemoAgency(db, { agencyId: agencyA, size: 'small' });
const summaryB = await seedDemoAgency(db, { agencyId: agencyB, size: 'small', now: DEMO_REFERENCE_NOW });

t.test('the same options give the same rows in every agency, under ids of its own', async (t) => {
  t.same({ ...summaryB, agencyId: agencyA }, summaryA);
  t.equal(summaryA.now, DEMO_REFERENCE_NOW.toISOString(), 'now defaults to the fixed reference');
  t.ok(
    summaryA.rows.patients >= 200 && summaryA.rows.patients < 1000,
    `a few hundred patients (${summaryA.rows.patients})`,
  );
  for (const table of Object.keys(summaryA.rows) as (keyof SeedSummary['rows'])[]) {
    t.ok(summaryA.rows[table] > 0, `${table} has rows`);
    t.same(
      await rowsOf(table, agencyB),
      await rowsOf(table, agencyA),
      `${table} rows match apart from agency_id and ids`,
    );
  }
});

t.test('no id names a resource in both agencies, in any table with an agency_id', async (t) => {
  const [idsA, idsB] = [await idsOf(agencyA), await idsOf(agencyB)];
  t.ok(idsA.size > 5000, `the ids of every table (${idsA.size})`);
  t.same(
    [...idsA].filter((id) => idsB.has(id) && !setUp.has(id)),
    [],
    'none shared',
  );
});

t.test('every status and discipline the contract knows is present', async (t) => {
  const expected: [keyof DB & string, string, string, string][] = [
    ['patients', 'status', 'PatientSummary', 'status'],
    ['patients', 'service_line', 'PatientSummary', 'service_line'],
    ['episodes', 'status', 'Episode', 'status'],
    ['episodes', 'type', 'Episode', 'type'],
    ['intakes', 'status', 'IntakeSummary', 'status'],
    ['referrals', 'disposition', 'ReferralSummary', 'disposition'],
    ['referrals', 'referral_type_category', 'ReferralSummary', 'referral_type_category'],
    ['referrals', 'request_shape', 'ReferralDetail', 'request_shape'],
    ['visits', 'status', 'VisitSummary', 'status'],
    ['visits', 'discipline', 'VisitSummary', 'discipline'],
    ['visits', 'visit_type', 'VisitSummary', 'visit_type'],
    ['visits', 'evv_status', 'VisitDetail', 'evv_status'],
    ['visits', 'documentation_status', 'VisitDetail', 'documentation_status'],
    ['tasks', 'status', 'Task', 'status'],
    ['tasks', 'priority', 'Task', 'priority'],
    ['physician_orders', 'signature_status', 'PhysicianOrder', 'signature_status'],
    ['physician_orders', 'order_type', 'PhysicianOrder', 'order_type'],
  ];
  for (const [table, column, schema, property] of expected) {
    t.same(await distinct(table, column, agencyA), enumOf(schema, property).sort(), `${table}.${column}`);
  }
  const statusesByLine = await db
    .selectFrom('patients')
    .select(['service_line', 'status'])
    .distinct()
    .where('agency_id', '=', agencyA)
    .execute();
  t.equal(statusesByLine.length, 3 * 7, 'every service line in every status');
});

t.test(
  'physician orders of the last 120 days, from several physicians, in every aging bucket, some past the SLA',
  async (t) => {
    const orders = await db
      .selectFrom('physician_orders')
      .innerJoin('offices', (join) =>
        join
          .onRef('offices.agency_id', '=', 'physician_orders.agency_id')
          .onRef('offices.id', '=', 'physician_orders.office_id'),
      )
      .select([
        'signature_status',
        'sent_at',
        'signed_at',
        'physician_orders.created_at',
        'physician_id',
        'delivery_method',
        'offices.timezone',
      ])
      .where('physician_orders.agency_id', '=', agencyA)
      .execute();
    const asOf = DEMO_REFERENCE_NOW;
    const agings = orders.map((order) => orderAging(order, { asOf, timeZone: order.timezone, slaDays: 7 }));
    t.same(
      [...new Set(agings.map((a) => a.aging_bucket).filter((b) => b !== null))].sort(),
      enumOf('PhysicianOrder', 'aging_bucket').sort(),
      'every bucket',
    );
    t.ok(agings.filter((a) => a.sla_breached && a.days_to_sign !== null).length > 0, 'some signed past the SLA');
    t.ok(agings.filter((a) => a.sla_breached && a.days_outstanding !== null).length > 0, 'some awaiting past the SLA');
    t.ok(new Set(orders.map((o) => o.physician_id)).size >= 5, 'several physicians');
    t.same(
      [...new Set(orders.map((o) => o.delivery_method))].sort(),
      [...enumOf('PhysicianOrder', 'delivery_method'), null].sort(),
      'every delivery method, and none until sent',
    );
    const ages = orders.map((o) => (asOf.getTime() - o.created_at.getTime()) / DAY_MS);
    t.ok(
      Math.max(...ages) <= 120 && Math.max(...ages) > 100 && Math.min(...ages) >= 0,
      `created over the last 120 days (${Math.min(...ages)} to ${Math.max(...ages)} days ago)`,
    );
  },
);

t.test('visits span the last and the next 60 days', async (t) => {
  const { first, last } = await db
    .selectFrom('visits')
    .select((eb) => [eb.fn.min('scheduled_start').as('first'), eb.fn.max('scheduled_start').as('last')])
    .where('agency_id', '=', agencyA)
    .executeTakeFirstOrThrow();
  const now = DEMO_REFERENCE_NOW.getTime();
  const daysFromNow = (at: unknown) => (new Date(at as Date).getTime() - now) / DAY_MS;
  t.ok(daysFromNow(first) >= -61 && daysFromNow(first) < -55, `first visit ${first}`);
  t.ok(daysFromNow(last) <= 61 && daysFromNow(last) > 55, `last visit ${last}`);
});

t.test('nothing is recorded after now, or changed before it was created', async (t) => {
  const tables = (Object.keys(summaryA.rows) as (keyof SeedSummary['rows'])[]).filter(
    (table) => table !== 'referral_documents',
  );
  for (const table of tables) {
    const { count } = await db
      .selectFrom(table as 'patients')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('agency_id', '=', agencyA)
      .where((eb) =>
        eb.or([
          eb('created_at', '>', DEMO_REFERENCE_NOW),
          eb('updated_at', '>', DEMO_REFERENCE_NOW),
          eb('updated_at', '<', eb.ref('created_at')),
        ]),
      )
      .executeTakeFirstOrThrow();
    t.equal(Number(count), 0, table);
  }
});

t.test('addresses stay in the service area; only out-of-area leads are outside, and they are declined', async (t) => {
  const patientZips = await distinct('patients', 'zip_code', agencyA);
  t.ok(
    patientZips.every((zip) => SERVICE_ZIPS.includes(zip)),
    'patients',
  );
  const referrals = await db
    .selectFrom('referrals')
    .select(['zip_code', 'disposition', 'decline_reason', 'patient_id', 'office_id'])
    .where('agency_id', '=', agencyA)
    .execute();
  const outside = referrals.filter((r) => !SERVICE_ZIPS.includes(r.zip_code ?? ''));
  t.ok(outside.length > 0, 'some leads come from outside');
  t.ok(
    outside.every(
      (r) =>
        r.disposition === 'declined' &&
        r.decline_reason === 'out_of_area' &&
        r.patient_id === null &&
        r.office_id === null,
    ),
  );
  t.ok(
    referrals.filter((r) => r.decline_reason === 'out_of_area').length === outside.length,
    'and only they are out of area',
  );
  const dependents = await db
    .selectFrom('coverages')
    .select('id')
    .where('agency_id', '=', agencyA)
    .where('relationship_to_insured', '<>', '18')
    .execute();
  t.ok(dependents.length > 0, 'some coverage is through a policy holder other than the patient');
});

t.test('a one-office agency gets branches, and its ZIPs and patients are routed to them', async (t) => {
  t.ok(summaryA.officesCreated >= 2 && summaryA.officesCreated <= 3, `${summaryA.officesCreated} branches`);
  const zips = await db
    .selectFrom('agency_service_zips')
    .select(['zip_code', 'office_id'])
    .where('agency_id', '=', agencyA)
    .execute();
  t.equal(new Set(zips.map((z) => z.office_id)).size, summaryA.officesCreated + 1, 'every office serves some ZIPs');
  const officeOf = new Map(zips.map((z) => [z.zip_code, z.office_id]));
  const patients = await db
    .selectFrom('patients')
    .select(['zip_code', 'office_id'])
    .where('agency_id', '=', agencyA)
    .execute();
  t.ok(
    patients.every((p) => officeOf.get(p.zip_code ?? '') === p.office_id),
    'each patient is served by the office of their ZIP',
  );
});

t.test('dates move with now', async (t) => {
  const agency = await createAgency(db, SERVICE_ZIPS.slice(0, 1));
  const now = new Date('2025-05-01T15:00:00Z');
  const summary = await seedDemoAgency(db, { agencyId: agency, size: 'small', now });
  t.equal(summary.officesCreated, 0, 'one ZIP cannot be spread over branches');
  const latest = await db
    .selectFrom('referrals')
    .select((eb) => eb.fn.max('referral_date').as('at'))
    .where('agency_id', '=', agency)
    .executeTakeFirstOrThrow();
  t.ok(
    new Date(latest.at as Date) <= now && new Date(latest.at as Date).getTime() > now.getTime() - 7 * DAY_MS,
    `latest referral ${latest.at}`,
  );
});

t.test('seeding refuses an agency that has patients, does not exist or has no service area', async (t) => {
  await t.rejects(seedDemoAgency(db, { agencyId: agencyA, size: 'small' }), {
    name: 'DemoSeedError',
    message: /already has patients/,
  });
  await t.rejects(seedDemoAgency(db, { agencyId: 'agy_missing', size: 'small' }), {
    name: 'DemoSeedError',
    message: /does not exist/,
  });
  await t.rejects(seedDemoAgency(db, { agencyId: await createAgency(db, []), size: 'small' }), {
    name: 'DemoSeedError',
    message: /no service ZIPs/,
  });
});

t.test(
  'HHVBP: two years imported through the admin import, one with the (fictional) report published, alike in every agency',
  async (t) => {
    const imports = async (agencyId: string) =>
      db
        .selectFrom('hhvbp_imports')
        .select(['performance_year', 'cohort', 'official_total_performance_score', 'superseded_at'])
        .where('agency_id', '=', agencyId)
        .orderBy('performance_year')
        .execute();
    const a = await imports(agencyA);
    t.same(
      a.map((i) => [i.performance_year, i.cohort, i.official_total_performance_score !== null, i.superseded_at]),
      [
        [2024, 'smaller', true, null],
        [2025, 'smaller', false, null],
      ],
    );
    t.same(await imports(agencyB), a);
    const results = async (agencyId: string) =>
      await db
        .selectFrom('hhvbp_measure_results as r')
        .innerJoin('hhvbp_imports as i', (join) =>
          join.onRef('i.agency_id', '=', 'r.agency_id').onRef('i.id', '=', 'r.import_id'),
        )
        .select(['r.measure_id', 'r.agency_value', 'r.benchmark', 'r.official_achievement_points'])
        .where('r.agency_id', '=', agencyId)
        .orderBy('i.performance_year')
        .orderBy('r.measure_id')
        .execute();
    t.equal((await results(agencyA)).length, 7 + 5, 'the smaller-volume cohort: 7 measures in PY2024, 5 in PY2025');
    t.same(await results(agencyB), await results(agencyA));
  },
);

t.test("the seed is the demo seed's platform command: one audit record of it, and one of each import", async (t) => {
  const audit = await db
    .selectFrom('audit_events')
    .select(['operation_id', 'extension_id', 'details'])
    .where('agency_id', '=', agencyA)
    .orderBy('operation_id')
    .execute();
  t.match(audit, [
    { operation_id: 'seedDemoAgency', extension_id: 'platform', details: { actor: 'demo-seed', size: 'small' } },
    { operation_id: 'seedDemoEra', details: { actor: 'demo-seed' } },
    { operation_id: 'seedDemoHhvbp', details: { actor: 'demo-seed' } },
  ]);
  t.equal(audit.length, 3);
});
