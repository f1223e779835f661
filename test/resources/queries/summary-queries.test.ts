import t from 'tap';
import { sql } from 'kysely';
import { buildTestApp, signIn, type SignedInApi } from '../../helpers/app.js';
import { seededAgency } from '../../helpers/clinical.js';
import { testDatabase } from '../../helpers/database.js';
import { operations } from '../../../src/generated/contract.js';

/**
 * The queries that total in SQL what a one-answer reader (an MCP tool) needs, checked against the stored rows of a
 * seeded agency, summed here row by row.
 */
const { db } = await testDatabase();
const api = await buildTestApp({}, t);
const { agencyId, phi, noPhi } = await seededAgency(api);
const other = await signIn(api, { phiMode: 'phi' });

const YEAR = new Date().getUTCFullYear();
// The small seed has one office and no visit of a past year: a second office, charts without one, and visits of past
// years left scheduled give every kind of row something to count.
await db
  .insertInto('offices')
  .values({ agency_id: agencyId, id: 'off_north', name: 'North Office', timezone: 'America/Chicago' })
  .execute();
const charts = (
  await db
    .selectFrom('patients')
    .select('id')
    .where('agency_id', '=', agencyId)
    .where('status', '=', 'active')
    .orderBy('id')
    .limit(7)
    .execute()
).map((chart) => chart.id);
const [north, unassigned] = [charts.slice(0, 4), charts.slice(4)];
await db
  .updateTable('patients')
  .set({ office_id: 'off_north' })
  .where('agency_id', '=', agencyId)
  .where('id', 'in', north)
  .execute();
await db
  .updateTable('patients')
  .set({ office_id: null })
  .where('agency_id', '=', agencyId)
  .where('id', 'in', unassigned)
  .execute();
const visits = await db
  .selectFrom('visits')
  .select('id')
  .where('agency_id', '=', agencyId)
  .orderBy('id')
  .limit(3)
  .execute();
for (const [i, { id }] of visits.entries()) {
  const year = i === 0 ? YEAR - 2 : YEAR - 1;
  await db
    .updateTable('visits')
    .set({
      status: 'scheduled',
      scheduled_start: new Date(`${year}-06-0${i + 1}T15:00:00Z`),
      scheduled_end: new Date(`${year}-06-0${i + 1}T16:00:00Z`),
      actual_start: null,
      actual_end: null,
      // Whatever the seeded visit was: a missed or cancelled one keeps its reason only in that status.
      missed_reason: null,
      cancellation_reason: null,
    })
    .where('agency_id', '=', agencyId)
    .where('id', '=', id)
    .execute();
}

type Row = Record<string, any>;
const contractValues = (operationId: keyof typeof operations, name: string): string[] =>
  (operations[operationId].queryParameters as readonly { name: string; schema: { enum?: string[] } }[]).find(
    (parameter) => parameter.name === name,
  )!.schema.enum!;
const SERVICE_LINES = contractValues('listPatients', 'service_line');
const DISPOSITIONS = contractValues('listReferrals', 'disposition');
const INTAKE_STATUSES = contractValues('listIntakes', 'status');

async function rowsOf(session: SignedInApi, queryId: string, parameters: Row = {}): Promise<Row[]> {
  const res = await session.request({
    method: 'POST',
    url: `/api/v1/ext/queries/${queryId}/run`,
    payload: { parameters, limit: 1000 },
  });
  if (res.statusCode !== 200) throw new Error(`${queryId}: ${res.statusCode} ${res.body}`);
  if (res.json().data.nextCursor !== null) throw new Error(`${queryId}: more than one page`);
  return res.json().data.rows;
}

const tally = (keys: readonly string[]) => Object.fromEntries(keys.map((key) => [key, 0])) as Record<string, number>;

t.test('the catalog lists them, usable without PHI, with a column per value the contract enumerates', async (t) => {
  const { data } = (await phi.request({ method: 'GET', url: '/api/v1/ext/catalog' })).json();
  const columns = (id: string) => {
    const query = data.queries.find((q: Row) => q.id === id);
    t.match(query, { no_phi: 'allowed', no_phi_usable: true }, id);
    return query.columns.map((c: Row) => c.name);
  };
  t.same(columns('census_summary'), ['level', 'office_name', 'office_id', ...SERVICE_LINES, 'active_patients']);
  t.same(columns('referral_pipeline'), [
    'referred_from',
    'referred_to',
    'referrals',
    ...DISPOSITIONS.map((d) => `referrals_${d}`),
    ...INTAKE_STATUSES.map((s) => `intakes_${s}`),
  ]);
  t.same(columns('visit_status_by_year'), ['status', 'scheduled_in_year', 'scheduled_in_past_years']);
  t.same(columns('remittance_totals').slice(0, 3), ['level', 'payer_name', 'payer_id']);
});

t.test("census_summary: the agency's total first, then each office, a column per service line", async (t) => {
  const charts = await db
    .selectFrom('patients')
    .leftJoin('offices', (j) =>
      j.onRef('offices.agency_id', '=', 'patients.agency_id').onRef('offices.id', '=', 'patients.office_id'),
    )
    .select(['offices.name', 'patients.office_id', 'patients.service_line'])
    .where('patients.agency_id', '=', agencyId)
    .where('patients.status', '=', 'active')
    .execute();
  const agency: Row = { level: 'agency', office_name: 'All offices', office_id: '', ...tally(SERVICE_LINES) };
  agency.active_patients = 0;
  const offices = new Map<string, Row>();
  for (const chart of charts) {
    const id = chart.office_id ?? '';
    const office = offices.get(id) ?? {
      level: 'office',
      office_name: chart.name ?? 'Unassigned',
      office_id: id,
      ...tally(SERVICE_LINES),
      active_patients: 0,
    };
    for (const row of [agency, office]) {
      row[chart.service_line] += 1;
      row.active_patients += 1;
    }
    offices.set(id, office);
  }
  const byName = [...offices.values()].sort((a, b) =>
    a.office_name === b.office_name ? (a.office_id < b.office_id ? -1 : 1) : a.office_name < b.office_name ? -1 : 1,
  );
  t.ok(
    offices.size === 3 && agency.active_patients > 10,
    `${agency.active_patients} charts in ${offices.size} offices`,
  );
  t.same(await rowsOf(phi, 'census_summary'), [agency, ...byName]);
  t.same(await rowsOf(noPhi, 'census_summary'), [agency, ...byName], 'a no_phi session sees the same');
  t.same(
    await rowsOf(other, 'census_summary'),
    [{ ...agency, ...tally(SERVICE_LINES), active_patients: 0 }],
    'an agency without charts has its total, all zeros, and no office',
  );
});

t.test('referral_pipeline: one row of the range, by disposition and intake status', async (t) => {
  for (const year of [2019, YEAR - 1, YEAR]) {
    const from = `${year}-01-01`;
    const to = `${year}-12-31`;
    const referrals = await db
      .selectFrom('referrals')
      .innerJoin('intakes', (j) =>
        j.onRef('intakes.agency_id', '=', 'referrals.agency_id').onRef('intakes.id', '=', 'referrals.intake_id'),
      )
      .select(['referrals.disposition', 'intakes.status'])
      .where('referrals.agency_id', '=', agencyId)
      .where('referrals.referral_date', '>=', new Date(`${from}T00:00:00Z`))
      .where('referrals.referral_date', '<', new Date(`${year + 1}-01-01T00:00:00Z`))
      .execute();
    const expected: Row = { referred_from: from, referred_to: to, referrals: referrals.length };
    for (const d of DISPOSITIONS) expected[`referrals_${d}`] = referrals.filter((r) => r.disposition === d).length;
    for (const s of INTAKE_STATUSES) expected[`intakes_${s}`] = referrals.filter((r) => r.status === s).length;
    t.same(await rowsOf(noPhi, 'referral_pipeline', { from, to }), [expected], String(year));
  }
  const year = (await rowsOf(phi, 'referral_pipeline', { from: `${YEAR}-01-01`, to: `${YEAR}-12-31` }))[0];
  t.ok(year.referrals > 0 && year.intakes_admitted > 0, 'the seeded year has referrals, some admitted');
  t.equal((await rowsOf(other, 'referral_pipeline', { from: `${YEAR}-01-01`, to: `${YEAR}-12-31` }))[0].referrals, 0);
});

t.test('visit_status_by_year: per status, the year and past years up to it', async (t) => {
  const visits = await db
    .selectFrom('visits')
    .select(['status', sql<number>`extract(year from scheduled_start at time zone 'UTC')::int`.as('year')])
    .where('agency_id', '=', agencyId)
    .execute();
  t.ok(
    visits.some((v) => v.status === 'scheduled' && v.year < YEAR),
    'the seed has visits of past years still scheduled',
  );
  for (const year of [YEAR - 2, YEAR - 1, YEAR, YEAR + 1]) {
    const counts = new Map<string, Row>();
    for (const visit of visits.filter((v) => v.year <= year)) {
      const row = counts.get(visit.status) ?? {
        status: visit.status,
        scheduled_in_year: 0,
        scheduled_in_past_years: 0,
      };
      if (visit.year === year) row.scheduled_in_year += 1;
      if (visit.year < YEAR) row.scheduled_in_past_years += 1;
      counts.set(visit.status, row);
    }
    const expected = [...counts.values()].sort((a, b) => (a.status < b.status ? -1 : 1));
    t.same(await rowsOf(noPhi, 'visit_status_by_year', { year }), expected, String(year));
  }
  t.same(await rowsOf(other, 'visit_status_by_year', { year: YEAR }), []);
  const missing = await phi.request({
    method: 'POST',
    url: '/api/v1/ext/queries/visit_status_by_year/run',
    payload: {},
  });
  t.match(missing.json(), { code: 'PLATFORM_INVALID_INPUT', issues: [{ path: '/parameters/year' }] });
});

t.test(
  'remittance_totals: the total in SQL numeric first, then the rows of remittance_variance_by_payer',
  async (t) => {
    const range = { from: `${YEAR - 1}-01-01`, to: `${YEAR - 1}-12-31` };
    for (const parameters of [range, { from: `${YEAR}-01-01`, to: `${YEAR}-12-31` }]) {
      const payers = await rowsOf(phi, 'remittance_variance_by_payer', parameters);
      const [agency, ...rest] = await rowsOf(noPhi, 'remittance_totals', parameters);
      t.same(
        rest,
        payers.map((payer) => ({ level: 'payer', ...payer })),
      );
      const cents = (column: string) =>
        (payers.reduce((sum, payer) => sum + Math.round(Number(payer[column]) * 100), 0) / 100).toFixed(2);
      const count = (column: string) => payers.reduce((sum, payer) => sum + payer[column], 0);
      t.same(agency, {
        level: 'agency',
        payer_name: 'All payers',
        payer_id: '',
        ...Object.fromEntries(
          ['payments', 'claims', 'claims_with_variance', 'denied_claims'].map((c) => [c, count(c)]),
        ),
        ...Object.fromEntries(
          ['charged', 'paid', 'adjustments', 'patient_responsibility', 'variance'].map((c) => [c, cents(c)]),
        ),
      });
    }
    t.same(
      await rowsOf(other, 'remittance_totals', range),
      [
        {
          level: 'agency',
          payer_name: 'All payers',
          payer_id: '',
          payments: 0,
          claims: 0,
          charged: '0.00',
          paid: '0.00',
          adjustments: '0.00',
          patient_responsibility: '0.00',
          variance: '0.00',
          claims_with_variance: 0,
          denied_claims: 0,
        },
      ],
      'no payment: the total alone, zero',
    );
  },
);
