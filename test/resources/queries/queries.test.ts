import t from 'tap';
import { sql } from 'kysely';
import { buildTestApp, signIn, type Response, type SignedInApi } from '../../helpers/app.js';
import { seededAgency } from '../../helpers/clinical.js';
import { testDatabase } from '../../helpers/database.js';
import { GOVERNED_QUERIES } from '../../../src/resources/queries/governed-queries.js';
import { column, type GovernedQuery } from '../../../src/resources/queries/governed-query.js';
import { orderAging } from '../../../src/domain/physician-orders/aging.js';

const { db } = await testDatabase();

/** Every visit of the agency, one row each: a result of thousands of rows to page through. */
const visitLog: GovernedQuery<{ discipline?: string }> = {
  id: 'test_visit_log',
  title: 'Visit log',
  description: 'Every visit.',
  parameters: {
    properties: {
      discipline: {
        type: 'string',
        enum: ['SN', 'PT', 'OT', 'ST', 'MSW', 'HHA'],
        description: 'Only this discipline.',
      },
    },
  },
  columns: [
    column('visit_id', 'string', 'Visit id.'),
    column('patient_id', 'string', 'Patient.', { reduce: 'handle', kind: 'patient' }),
    column('discipline', 'string', 'Discipline.'),
    column('scheduled_start', 'date-time', 'Scheduled start.', { reduce: 'year' }),
  ],
  order: { columns: ['scheduled_start', 'visit_id'], direction: 'desc' },
  scope: 'external:visits:read',
  capability: 'visits.read',
  costUnits: 3,
  rows(store, { discipline }) {
    let visits = store.selectFrom('visits');
    if (discipline) visits = visits.where('visits.discipline', '=', discipline as never);
    return visits.select(['visits.id as visit_id', 'visits.patient_id', 'visits.discipline', 'visits.scheduled_start']);
  },
};

/** Declares a count but selects it as text: the runner must refuse its rows whole. */
const broken: GovernedQuery = {
  ...visitLog,
  id: 'test_broken',
  parameters: { properties: {} },
  columns: [column('discipline', 'string', 'Discipline.'), column('visits', 'integer', 'Visits.')],
  order: { columns: ['discipline'], direction: 'asc' },
  rows: (store) =>
    store
      .selectFrom('visits')
      .select(['visits.discipline', sql<string>`count(*)::text`.as('visits')])
      .groupBy('visits.discipline'),
};

const phiOnly: GovernedQuery = {
  ...broken,
  id: 'test_phi_only',
  noPhiDenied: true,
  rows: (store) =>
    store
      .selectFrom('visits')
      .select(['visits.discipline', sql<number>`count(*)::int`.as('visits')])
      .groupBy('visits.discipline'),
};

/** Sleeps in the database past the run's statement timeout. */
const slow: GovernedQuery = {
  ...phiOnly,
  id: 'test_slow',
  noPhiDenied: undefined,
  rows: (store) =>
    store
      .selectFrom('visits')
      .select([sql<string>`'x'`.as('discipline'), sql<number>`pg_sleep(6)::text::int`.as('visits')])
      .limit(1),
};

const api = await buildTestApp({}, t, undefined, [...GOVERNED_QUERIES, visitLog, broken, phiOnly, slow]);
const { agencyId, phi, noPhi } = await seededAgency(api);
const other = await signIn(api, { phiMode: 'phi' });

const RUN = (id: string) => `/api/v1/ext/queries/${id}/run`;
const today = new Date().toISOString().slice(0, 10);
const yearAgo = new Date(Date.now() - 365 * 86_400_000).toISOString().slice(0, 10);

function run(
  session: SignedInApi,
  id: string,
  body: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<Response> {
  return session.request({ method: 'POST', url: RUN(id), payload: body, headers });
}

async function walk(session: SignedInApi, id: string, parameters: Record<string, unknown>, limit: number) {
  const rows: Record<string, unknown>[] = [];
  let cursor: string | undefined;
  for (let pages = 0; ; pages++) {
    const res = await run(session, id, { parameters, limit, ...(cursor ? { cursor } : {}) });
    if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`);
    const { data } = res.json();
    if (data.row_count !== data.rows.length)
      throw new Error(`row_count ${data.row_count} for ${data.rows.length} rows`);
    rows.push(...data.rows);
    if (data.nextCursor === null) return { rows, pages: pages + 1 };
    cursor = data.nextCursor;
  }
}

t.test('the catalog lists each query with what a form needs', async (t) => {
  const { data } = (await phi.request({ method: 'GET', url: '/api/v1/ext/catalog' })).json();
  const census = data.queries.find((q: { id: string }) => q.id === 'active_census');
  t.match(census, {
    title: String,
    scope: 'external:patients:read',
    capability: 'patients.read',
    no_phi: 'allowed',
    no_phi_usable: true,
    cost_units: 5,
    order: { columns: ['office_name', 'office_id', 'service_line'], direction: 'asc' },
    parameters_schema: {
      type: 'object',
      additionalProperties: false,
      properties: { service_line: { enum: ['home_health', 'hospice', 'private_duty'] } },
    },
  });
  t.same(
    census.parameters.map((p: { name: string; in: string; required: boolean }) => [p.name, p.in, p.required]),
    [
      ['service_line', 'body', false],
      ['office_id', 'body', false],
    ],
  );
  const visits = data.queries.find((q: { id: string }) => q.id === 'visits_missed_or_late');
  t.match(visits.parameters, [
    { name: 'from', required: true, format: 'date' },
    { name: 'to', required: true },
    { name: 'grace_minutes', type: 'integer', default: 15, minimum: 0, maximum: 240 },
    { name: 'office_id' },
  ]);
  const orders = data.queries.find((q: { id: string }) => q.id === 'orders_awaiting_signature');
  t.match(orders, { no_phi: 'pseudonymized', capability: 'physician_orders.read' });
  t.match(
    orders.columns.find((c: { name: string }) => c.name === 'patient_id'),
    { type: 'string', phi: { reduce: 'handle', kind: 'patient' } },
  );
  t.match(
    data.queries.find((q: { id: string }) => q.id === 'test_phi_only'),
    { no_phi: 'denied', no_phi_usable: false },
  );
  t.same(
    data.queries.slice(0, GOVERNED_QUERIES.length).map((q: { id: string }) => q.id),
    GOVERNED_QUERIES.map((q) => q.id),
  );
});

t.test("active census: the agency's active charts per office and service line, and no other agency's", async (t) => {
  const expected = await db
    .selectFrom('patients')
    .leftJoin('offices', (j) =>
      j.onRef('offices.agency_id', '=', 'patients.agency_id').onRef('offices.id', '=', 'patients.office_id'),
    )
    .select(['offices.name', 'patients.office_id', 'patients.service_line', sql<number>`count(*)::int`.as('n')])
    .where('patients.agency_id', '=', agencyId)
    .where('patients.status', '=', 'active')
    .groupBy(['offices.name', 'patients.office_id', 'patients.service_line'])
    .execute();
  const res = await run(phi, 'active_census');
  t.equal(res.statusCode, 200);
  const { data } = res.json();
  t.same(
    data.columns.map((c: { name: string }) => c.name),
    ['office_name', 'office_id', 'service_line', 'active_patients'],
  );
  const got = data.rows
    .map((r: Record<string, unknown>) => `${r.office_id}|${r.service_line}|${r.active_patients}`)
    .sort();
  t.same(got, expected.map((r) => `${r.office_id ?? ''}|${r.service_line}|${r.n}`).sort());
  t.same(
    [...data.rows].sort((a, b) =>
      a.office_name + a.office_id + a.service_line < b.office_name + b.office_id + b.service_line ? -1 : 1,
    ),
    data.rows,
    'in keyset order',
  );
  t.equal(data.nextCursor, null);
  const hospice = (await run(phi, 'active_census', { parameters: { service_line: 'hospice' } })).json().data.rows;
  t.ok(hospice.length > 0 && hospice.every((r: { service_line: string }) => r.service_line === 'hospice'));
  t.same((await run(other, 'active_census')).json().data.rows, [], 'an empty agency has no census');
});

t.test('referrals by source and disposition match the stored referrals of the range', async (t) => {
  const stored = await db
    .selectFrom('referrals')
    .select(['referral_source_id', 'disposition', sql<number>`count(*)::int`.as('n')])
    .where('agency_id', '=', agencyId)
    .where('referral_date', '>=', new Date(`${yearAgo}T00:00:00Z`))
    .groupBy(['referral_source_id', 'disposition'])
    .execute();
  const { rows } = await walk(phi, 'referrals_by_source', { from: yearAgo, to: today }, 7);
  t.same(
    rows.map((r) => `${r.source_id}|${r.disposition}|${r.referrals}`).sort(),
    stored.map((r) => `${r.referral_source_id ?? ''}|${r.disposition}|${r.n}`).sort(),
  );
  const conversion = (
    await run(phi, 'intake_conversion_by_source', { parameters: { from: yearAgo, to: today }, limit: 1000 })
  ).json().data.rows;
  t.equal(
    conversion.reduce((n: number, r: { referrals: number }) => n + r.referrals, 0),
    stored.reduce((n, r) => n + r.n, 0),
  );
  for (const row of conversion)
    t.equal(row.conversion_rate, Math.round((row.admitted / row.referrals) * 10_000) / 10_000);
});

t.test("unsigned orders by physician: the domain's aging of every awaiting order, one row per physician", async (t) => {
  const orders = await db
    .selectFrom('physician_orders as o')
    .innerJoin('offices', (j) =>
      j.onRef('offices.agency_id', '=', 'o.agency_id').onRef('offices.id', '=', 'o.office_id'),
    )
    .select(['o.physician_id', 'o.signature_status', 'o.sent_at', 'o.signed_at', 'offices.timezone'])
    .where('o.agency_id', '=', agencyId)
    .where('o.signature_status', '=', 'awaiting_signature')
    .execute();
  const res = await run(phi, 'unsigned_orders_by_physician', { limit: 1000 });
  const { rows, as_of } = res.json().data;
  const asOf = new Date(as_of);
  const expected = new Map<string, Record<string, number>>();
  for (const order of orders) {
    const aging = orderAging(order, { asOf, timeZone: order.timezone, slaDays: 7 });
    const row = expected.get(order.physician_id) ?? { total: 0, sla_breached: 0 };
    row[aging.aging_bucket!] = (row[aging.aging_bucket!] ?? 0) + 1;
    row.total += 1;
    row.sla_breached += aging.sla_breached ? 1 : 0;
    expected.set(order.physician_id, row);
  }
  t.equal(rows.length, expected.size);
  for (const row of rows) t.match(row, expected.get(row.physician_id), row.physician_id);
});

t.test('a walk of thousands of rows with limit 1 and 100 loses and repeats nothing', async (t) => {
  const ids = (
    await db
      .selectFrom('visits')
      .select('id')
      .where('agency_id', '=', agencyId)
      .orderBy('scheduled_start', 'desc')
      .orderBy('id', 'desc')
      .execute()
  ).map((r) => r.id);
  t.ok(ids.length >= 2000, `${ids.length} visits`);
  const hundred = await walk(phi, 'test_visit_log', {}, 100);
  t.same(
    hundred.rows.map((r) => r.visit_id),
    ids,
  );
  t.equal(hundred.pages, Math.ceil(ids.length / 100));
  const one = await walk(phi, 'test_visit_log', { discipline: 'PT' }, 1);
  const pt = (
    await db
      .selectFrom('visits')
      .select('id')
      .where('agency_id', '=', agencyId)
      .where('discipline', '=', 'PT')
      .orderBy('scheduled_start', 'desc')
      .orderBy('id', 'desc')
      .execute()
  ).map((r) => r.id);
  t.ok(pt.length > 100, `${pt.length} PT visits, one page each`);
  t.same(
    one.rows.map((r) => r.visit_id),
    pt,
  );
});

t.test('cursors are bound to the query, its parameters, the agency and the PHI mode', async (t) => {
  const first = (await run(phi, 'test_visit_log', { parameters: { discipline: 'SN' }, limit: 5 })).json().data;
  const cursor = first.nextCursor;
  t.type(cursor, 'string');
  t.equal(
    (await run(phi, 'test_visit_log', { parameters: { discipline: 'SN' }, limit: 50, cursor })).statusCode,
    200,
    'limit may change',
  );
  const refusals = [
    await run(phi, 'test_visit_log', { parameters: { discipline: 'PT' }, cursor }),
    await run(phi, 'test_visit_log', { cursor }),
    await run(phi, 'active_census', { cursor }),
    await run(noPhi, 'test_visit_log', { parameters: { discipline: 'SN' }, cursor }),
    await run(other, 'test_visit_log', { parameters: { discipline: 'SN' }, cursor }),
    await run(phi, 'test_visit_log', { parameters: { discipline: 'SN' }, cursor: `${cursor.slice(0, -2)}AA` }),
  ];
  for (const res of refusals) {
    t.equal(res.statusCode, 400);
    t.match(res.json().error, { code: 'PLATFORM_INVALID_INPUT', details: { field: 'cursor' } });
  }
});

t.test(
  'no_phi sessions see each column as it declares: the same handles as the order list, years, no day counts, nothing withheld leaks',
  async (t) => {
    const phiRows = (await run(phi, 'orders_awaiting_signature', { limit: 1000 })).json().data.rows;
    const res = await run(noPhi, 'orders_awaiting_signature', { limit: 1000 });
    t.equal(res.statusCode, 200);
    const rows = res.json().data.rows;
    t.equal(rows.length, phiRows.length);
    t.ok(rows.length > 10);
    const listed = (
      await noPhi.request({ method: 'GET', url: '/api/v1/ext/physician-orders?status=awaiting_signature&limit=200' })
    ).json().data;
    const handles = new Map(listed.map((o: { id: string; patient_id: string; physician_id: string }) => [o.id, o]));
    for (const row of rows) {
      t.match(row, {
        order_id: /^OR-/,
        patient_id: /^PT-/,
        physician_id: /^PH-/,
        physician_name: null,
        physician_npi: null,
        days_outstanding: null,
      });
      if (row.sent_at !== null) t.match(row.sent_at, /^\d{4}-01-01T00:00:00\.000Z$/);
      const same = handles.get(row.order_id) as { patient_id: string; physician_id: string } | undefined;
      if (same)
        t.same(
          [row.patient_id, row.physician_id],
          [same.patient_id, same.physician_id],
          'the handles of the order list',
        );
    }
    const body = res.body;
    for (const row of phiRows) {
      for (const value of [row.order_id, row.patient_id, row.physician_id, row.physician_name, row.physician_npi])
        t.notOk(body.includes(value), `${value} not in the no_phi answer`);
    }
    const byPhysician = (await run(noPhi, 'unsigned_orders_by_physician', { limit: 1000 })).json().data.rows;
    t.ok(
      byPhysician.length > 0 &&
        byPhysician.every((row: { oldest_days_outstanding: unknown }) => row.oldest_days_outstanding === null),
      "no oldest order's days",
    );
    const denied = await run(noPhi, 'test_phi_only');
    t.equal(denied.statusCode, 403);
    t.equal(denied.json().error.code, 'PLATFORM_PHI_MODE_DENIED');
  },
);

t.test('refusals: unknown query, policy, scope, parameters, limit', async (t) => {
  const unknown = await run(phi, 'no_such_query');
  t.equal(unknown.statusCode, 404);
  t.match(unknown.json().error, { code: 'PLATFORM_QUERY_NOT_FOUND', details: { query_id: 'no_such_query' } });
  const narrow = await signIn(api, {
    integration: { agencyId, capabilities: ['oauth.token', 'queries.run', 'patients.read'] },
  });
  const notAllowed = await run(narrow, 'visits_missed_or_late', { parameters: { from: yearAgo, to: today } });
  t.equal(notAllowed.statusCode, 403);
  t.match(notAllowed.json().error, { code: 'PLATFORM_QUERY_NOT_ALLOWED', details: { capability: 'visits.read' } });
  t.equal((await run(narrow, 'active_census')).statusCode, 200);
  const scoped = await signIn(api, {
    integration: { agencyId, scopes: ['external:queries:run', 'external:patients:read'] },
  });
  const noScope = await run(scoped, 'referrals_by_source', { parameters: { from: yearAgo, to: today } });
  t.match(noScope.json().error, {
    code: 'PLATFORM_QUERY_NOT_ALLOWED',
    details: { required_scope: 'external:referrals:read' },
  });

  const bad = await run(phi, 'visits_missed_or_late', {
    parameters: { from: '2026-13-01', grace_minutes: '15', extra: 1 },
  });
  t.equal(bad.statusCode, 400);
  t.equal(bad.json().code, 'PLATFORM_INVALID_INPUT');
  t.same(
    bad
      .json()
      .issues.map((i: { path: string; keyword: string }) => `${i.path} ${i.keyword}`)
      .sort(),
    [
      '/parameters/extra additionalProperties',
      '/parameters/from format',
      '/parameters/grace_minutes type',
      '/parameters/to required',
    ],
  );
  const reversed = await run(phi, 'referrals_by_source', { parameters: { from: today, to: yearAgo } });
  t.match(reversed.json(), {
    code: 'PLATFORM_INVALID_INPUT',
    issues: [{ path: '/parameters/to', message: /before from/ }],
  });
  const notObject = await run(phi, 'active_census', { parameters: ['hospice'] });
  t.equal(notObject.statusCode, 400);
  t.equal(notObject.json().code, 'PLATFORM_INVALID_REQUEST', 'the contract types parameters as an object');
  t.equal((await run(phi, 'active_census', { limit: 1001 })).statusCode, 400);
  t.equal(
    (await run(phi, 'active_census', { anything: 'else' })).statusCode,
    200,
    'additional body properties are allowed',
  );
});

t.test('rows that do not match the declared columns are refused whole', async (t) => {
  const res = await run(phi, 'test_broken');
  t.equal(res.statusCode, 500);
  t.match(res.json().error, {
    code: 'PLATFORM_QUERY_COLUMN_MISMATCH',
    details: { query_id: 'test_broken', column: 'visits' },
  });
  t.notOk(res.body.includes('"rows"'));
});

t.test('an idempotency key is optional, checked when sent, and nothing is replayed', async (t) => {
  const keyed = await run(phi, 'active_census', {}, { 'idempotency-key': 'refresh-20261127' });
  t.equal(keyed.statusCode, 200);
  t.notOk(keyed.headers['idempotent-replayed']);
  const again = await run(phi, 'active_census', {}, { 'idempotency-key': 'refresh-20261127' });
  t.notOk(again.headers['idempotent-replayed'], 'a read runs again');
  const bad = await run(phi, 'active_census', {}, { 'idempotency-key': 'short' });
  t.equal(bad.statusCode, 400);
  t.equal(bad.json().code, 'PLATFORM_INVALID_IDEMPOTENCY_KEY');
});

t.test(
  "each run costs its query's units against the daily budget, is metered so, and is audited with its input",
  async (t) => {
    const budgeted = await signIn(api, { phiMode: 'phi', integration: { agencyId, dailyCostBudget: 8 } });
    t.equal(
      (await run(budgeted, 'test_visit_log', { limit: 1, natural_language_input: 'how many visits this week?' }))
        .statusCode,
      200,
      '3 units',
    );
    t.equal((await run(budgeted, 'active_census')).statusCode, 200, '5 units: 8 spent');
    t.equal((await run(budgeted, 'no_such_query')).statusCode, 404, 'an unknown query costs nothing');
    const refused = await run(budgeted, 'test_visit_log', { limit: 1 });
    t.equal(refused.statusCode, 402);
    t.match(refused.json().error, { code: 'PLATFORM_COST_LIMIT_EXCEEDED', details: { costUnits: 3, remaining: 0 } });
    const extensionId = budgeted.integration.extensionId;
    let metered: { operation_id: string; status: number; cost_units: number }[] = [];
    let audited: { details: unknown; status: number }[] = [];
    for (
      const deadline = Date.now() + 5_000;
      Date.now() < deadline && (metered.length < 4 || audited.length < 2);
      await new Promise((r) => setTimeout(r, 50))
    ) {
      metered = await db
        .selectFrom('metering_events')
        .select(['operation_id', 'status', 'cost_units'])
        .where('extension_id', '=', extensionId)
        .execute();
      audited = await db
        .selectFrom('audit_events')
        .select(['details', 'status'])
        .where('extension_id', '=', extensionId)
        .where('status', '=', 200)
        .orderBy('occurred_at')
        .execute();
    }
    t.same(
      metered.map((m) => [m.status, m.cost_units]).sort(),
      [
        [200, 3],
        [200, 5],
        [402, 3],
        [404, 0],
      ].sort(),
    );
    t.same(
      audited.map((a) => a.details),
      [
        {
          query_id: 'test_visit_log',
          parameters: {},
          natural_language_input: 'how many visits this week?',
          query_token_id: null,
        },
        { query_id: 'active_census', parameters: {}, natural_language_input: null, query_token_id: null },
      ],
    );
  },
);

t.test(
  'PostgreSQL: a run past its statement timeout is 504 PLATFORM_TIMEOUT',
  { skip: process.env.TEST_DATABASE_URL ? false : 'PGlite has no statement timer' },
  async (t) => {
    const started = Date.now();
    const res = await run(phi, 'test_slow');
    t.equal(res.statusCode, 504);
    t.equal(res.json().error.code, 'PLATFORM_TIMEOUT');
    t.ok(Date.now() - started < 5_900, "cancelled by the run's own 5 s timeout");
  },
);
