import t from 'tap';
import { buildTestApp, signIn, type Response, type SignedInApi } from '../../helpers/app.js';
import { seededAgency } from '../../helpers/clinical.js';
import { testDatabase } from '../../helpers/database.js';

const { db } = await testDatabase();
const api = await buildTestApp({}, t);
const { agencyId, phi, noPhi } = await seededAgency(api);
const other = await signIn(api, { phiMode: 'phi' });

const QUERY = 'remittance_variance_by_payer';
const day = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

function run(session: SignedInApi, parameters: Record<string, unknown>, limit = 1000): Promise<Response> {
  return session.request({ method: 'POST', url: `/api/v1/ext/queries/${QUERY}/run`, payload: { parameters, limit } });
}

const cents = (amount: string) => Math.round(Number(amount) * 100);
const money = (total: number) => (total / 100).toFixed(2);

/** The rows the query must give, summed here claim by claim from the stored payments and allocations. */
async function expectedRows(from: string, to: string) {
  const payments = await db
    .selectFrom('remittances')
    .select(['id', 'payer_name', 'payer_id'])
    .where('agency_id', '=', agencyId)
    .where('payment_date', '>=', from)
    .where('payment_date', '<=', to)
    .execute();
  const claims = await db.selectFrom('remittance_allocations').selectAll().where('agency_id', '=', agencyId).execute();
  const rows = new Map<
    string,
    {
      payer_name: string;
      payer_id: string;
      payments: number;
      claims: number;
      sums: number[];
      claims_with_variance: number;
      denied_claims: number;
    }
  >();
  for (const payment of payments) {
    const key = `${payment.payer_name}|${payment.payer_id ?? ''}`;
    const row = rows.get(key) ?? {
      payer_name: payment.payer_name,
      payer_id: payment.payer_id ?? '',
      payments: 0,
      claims: 0,
      sums: [0, 0, 0, 0, 0],
      claims_with_variance: 0,
      denied_claims: 0,
    };
    row.payments += 1;
    for (const claim of claims.filter((c) => c.remittance_id === payment.id)) {
      row.claims += 1;
      [
        claim.charged_amount,
        claim.paid_amount,
        claim.adjustment_amount,
        claim.patient_responsibility_amount,
        claim.variance_amount,
      ].forEach((amount, i) => {
        row.sums[i] += cents(amount);
      });
      if (cents(claim.variance_amount) !== 0) row.claims_with_variance += 1;
      if (claim.claim_status_code === '4') row.denied_claims += 1;
    }
    rows.set(key, row);
  }
  return [...rows.values()]
    .sort((a, b) =>
      a.payer_name === b.payer_name ? (a.payer_id < b.payer_id ? -1 : 1) : a.payer_name < b.payer_name ? -1 : 1,
    )
    .map(({ sums: [charged, paid, adjustments, patient_responsibility, variance], ...row }) => ({
      ...row,
      charged: money(charged),
      paid: money(paid),
      adjustments: money(adjustments),
      patient_responsibility: money(patient_responsibility),
      variance: money(variance),
    }));
}

t.test('the catalog lists it: remittances scope and capability, usable without PHI, money as strings', async (t) => {
  const { data } = (await phi.request({ method: 'GET', url: '/api/v1/ext/catalog' })).json();
  const query = data.queries.find((q: { id: string }) => q.id === QUERY);
  t.match(query, {
    title: 'Remittance variance by payer',
    scope: 'external:remittances:read',
    capability: 'remittances.read',
    no_phi: 'allowed',
    no_phi_usable: true,
    cost_units: 5,
    order: { columns: ['payer_name', 'payer_id'], direction: 'asc' },
    parameters_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['from', 'to'],
      properties: { from: { format: 'date' }, to: { format: 'date' } },
    },
  });
  t.same(
    query.columns.map((c: { name: string; type: string }) => `${c.name}:${c.type}`),
    [
      'payer_name:string',
      'payer_id:string',
      'payments:integer',
      'claims:integer',
      'charged:string',
      'paid:string',
      'adjustments:string',
      'patient_responsibility:string',
      'variance:string',
      'claims_with_variance:integer',
      'denied_claims:integer',
    ],
  );
  t.ok(query.columns.every((c: { phi: { reduce: string } }) => c.phi.reduce === 'kept'));
});

t.test('one row per payer, totals of the stored allocations of the payments dated in the range', async (t) => {
  const year = await expectedRows(day(-365), day(0));
  t.ok(year.length >= 2, `${year.length} payers`);
  t.ok(
    year.some((r) => r.denied_claims > 0),
    "the demo's denial is counted",
  );
  t.ok(year.reduce((n, r) => n + r.claims, 0) > 10);
  const res = await run(phi, { from: day(-365), to: day(0) });
  t.equal(res.statusCode, 200);
  t.same(res.json().data.rows, year);

  const recoupment = await db
    .selectFrom('remittances')
    .select('payment_date')
    .where('agency_id', '=', agencyId)
    .where('claim_count', '=', 0)
    .executeTakeFirstOrThrow();
  const date = String(recoupment.payment_date);
  const oneDay = await expectedRows(date, date);
  t.ok(
    oneDay.some((r) => r.payments > 0 && r.claims === 0 && r.paid === '0.00'),
    `the recoupment-only payment of ${date} counts, with no claim and "0.00" totals`,
  );
  t.same((await run(phi, { from: date, to: date })).json().data.rows, oneDay, 'a range of one day, both ends included');

  const paged = [];
  for (let cursor: string | null = null, first = true; first || cursor; first = false) {
    const res: Response = await phi.request({
      method: 'POST',
      url: `/api/v1/ext/queries/${QUERY}/run`,
      payload: { parameters: { from: day(-365), to: day(0) }, limit: 1, ...(cursor ? { cursor } : {}) },
    });
    paged.push(...res.json().data.rows);
    cursor = res.json().data.nextCursor;
  }
  t.same(paged, year, 'a page per payer loses and repeats nothing');
  t.same((await run(other, { from: day(-365), to: day(0) })).json().data.rows, [], "no other agency's payments");
});

t.test('a no_phi session runs it and sees the same rows', async (t) => {
  const res = await run(noPhi, { from: day(-365), to: day(0) });
  t.equal(res.statusCode, 200);
  t.same(res.json().data.rows, (await run(phi, { from: day(-365), to: day(0) })).json().data.rows);
});

t.test('wrong parameters are refused with an issue each', async (t) => {
  const bad = await run(phi, { from: '2026-02-30x', payer: 'Medicare' });
  t.equal(bad.statusCode, 400);
  t.same(
    bad
      .json()
      .issues.map((i: { path: string; keyword: string }) => `${i.path} ${i.keyword}`)
      .sort(),
    ['/parameters/from format', '/parameters/payer additionalProperties', '/parameters/to required'],
  );
  const reversed = await run(phi, { from: day(0), to: day(-1) });
  t.match(reversed.json(), {
    code: 'PLATFORM_INVALID_INPUT',
    issues: [{ path: '/parameters/to', message: /before from/ }],
  });
  t.match((await run(phi, { from: day(-400), to: day(0) })).json(), {
    code: 'PLATFORM_INVALID_INPUT',
    issues: [{ path: '/parameters/to', message: /longer than 366 days/ }],
  });
  t.equal((await run(phi, { from: 20260101, to: day(0) })).json().issues[0].keyword, 'type');
  const narrow = await signIn(api, {
    integration: { agencyId, capabilities: ['oauth.token', 'queries.run', 'patients.read'] },
  });
  t.match((await run(narrow, { from: day(-30), to: day(0) })).json().error, {
    code: 'PLATFORM_QUERY_NOT_ALLOWED',
    details: { capability: 'remittances.read' },
  });
});
