import t from 'tap';
import { sql } from 'kysely';
import { buildTestApp, signIn, type SignedInApi } from '../../helpers/app.js';
import { seededAgency } from '../../helpers/clinical.js';
import { testDatabase } from '../../helpers/database.js';

const database = await testDatabase();
const { db } = database;
const api = await buildTestApp();
const { agencyId, phi, noPhi } = await seededAgency(api);

const get = async (signed: SignedInApi, url: string) => signed.request({ method: 'GET', url });
const list = async (signed: SignedInApi, query = '') => (await get(signed, `/api/v1/ext/patients${query}`)).json();

/** The census in list order, straight from the database. */
async function censusIds(filter: (q: ReturnType<typeof patients>) => ReturnType<typeof patients> = (q) => q) {
  const rows = await filter(patients()).orderBy('last_name').orderBy('first_name').orderBy('id').execute();
  return rows.map((r) => r.id);
}
const patients = () =>
  db.selectFrom('patients').select(['id', 'last_name', 'first_name']).where('agency_id', '=', agencyId);

async function walk(signed: SignedInApi, query: string, by: 'offset' | 'cursor') {
  const ids: string[] = [];
  let next = '';
  for (;;) {
    const page = await list(signed, `?limit=70${query}${next}`);
    ids.push(...page.data.map((p: { id: string }) => p.id));
    if (!page.meta.has_more) return { ids, last: page.meta };
    next =
      by === 'offset' ? `&offset=${page.meta.next_offset}` : `&cursor=${encodeURIComponent(page.meta.next_cursor)}`;
  }
}

t.test('the census in name order, paged by offset or by cursor', async (t) => {
  const expected = await censusIds();
  const first = await list(phi);
  t.equal(first.data.length, 50, 'default page size');
  t.match(first.meta, {
    total: expected.length,
    total_exact: true,
    limit: 50,
    offset: 0,
    has_more: true,
    next_offset: 50,
    next_cursor: String,
  });
  t.same(
    first.data.map((p: { id: string }) => p.id),
    expected.slice(0, 50),
  );

  const byOffset = await walk(phi, '', 'offset');
  const byCursor = await walk(phi, '', 'cursor');
  t.same(byOffset.ids, expected);
  t.same(byCursor.ids, expected, 'the cursor walk sees the same rows in the same order');
  t.match(byCursor.last, {
    has_more: false,
    next_cursor: null,
    next_offset: null,
    total: expected.length,
    offset: 280,
  });
});

t.test('paging mistakes are 400s, not silent caps', async (t) => {
  t.equal((await get(phi, '/api/v1/ext/patients?limit=201')).statusCode, 400);
  t.equal((await get(phi, '/api/v1/ext/patients?limit=0')).statusCode, 400);
  const { meta } = await list(phi);
  const both = await get(phi, `/api/v1/ext/patients?offset=10&cursor=${meta.next_cursor}`);
  t.equal(both.statusCode, 400);
  t.match(both.json().error, { code: 'PLATFORM_INVALID_INPUT', details: { field: 'offset' } });
  for (const garbage of [
    'abc',
    Buffer.from('[["x"],1,2]').toString('base64url'),
    Buffer.from('{"a":1}').toString('base64url'),
  ]) {
    const bad = await get(phi, `/api/v1/ext/patients?cursor=${garbage}`);
    t.equal(bad.statusCode, 400, garbage);
    t.match(bad.json().error, { code: 'PLATFORM_INVALID_INPUT', details: { field: 'cursor' } });
  }
});

t.test('cursors are sealed: opaque, tamper-proof and bound to their list', async (t) => {
  const page = await list(noPhi);
  const cursor: string = page.meta.next_cursor;
  const [lastRow] = await patients()
    .orderBy('last_name')
    .orderBy('first_name')
    .orderBy('id')
    .offset(49)
    .limit(1)
    .execute();
  const decoded = Buffer.from(cursor, 'base64url').toString('latin1');
  for (const secret of [lastRow.last_name, lastRow.first_name, lastRow.id])
    t.notOk(decoded.includes(secret), 'the last row cannot be read from the cursor');
  const tampered = cursor.slice(0, 20) + (cursor[20] === 'A' ? 'B' : 'A') + cursor.slice(21);
  t.match((await get(noPhi, `/api/v1/ext/patients?cursor=${tampered}`)).json().error, {
    code: 'PLATFORM_INVALID_INPUT',
    details: { field: 'cursor' },
  });
  const visitsCursor = (await get(phi, '/api/v1/ext/visits?limit=1')).json().meta.next_cursor;
  t.equal(
    (await get(phi, `/api/v1/ext/patients?cursor=${visitsCursor}`)).statusCode,
    400,
    "another list's cursor is refused",
  );
});

t.test('filters: status, service line, office, updated since', async (t) => {
  const sample = await db
    .selectFrom('patients')
    .selectAll()
    .where('agency_id', '=', agencyId)
    .where('office_id', 'is not', null)
    .orderBy('id')
    .executeTakeFirstOrThrow();
  const cases = [
    { query: '&status=active', filter: (q: ReturnType<typeof patients>) => q.where('status', '=', 'active') },
    {
      query: '&service_line=hospice',
      filter: (q: ReturnType<typeof patients>) => q.where('service_line', '=', 'hospice'),
    },
    {
      query: `&office_id=${sample.office_id}`,
      filter: (q: ReturnType<typeof patients>) => q.where('office_id', '=', sample.office_id),
    },
    {
      query: '&status=discharged&service_line=home_health',
      filter: (q: ReturnType<typeof patients>) =>
        q.where('status', '=', 'discharged').where('service_line', '=', 'home_health'),
    },
  ];
  for (const { query, filter } of cases) {
    const expected = await censusIds(filter);
    t.ok(expected.length > 0, `${query} matches seeded charts`);
    t.same((await walk(phi, query, 'cursor')).ids, expected, query);
  }
  await db
    .updateTable('patients')
    .set({ updated_at: new Date('2030-01-01T00:00:00Z') })
    .where('agency_id', '=', agencyId)
    .where('id', '=', sample.id)
    .execute();
  const recent = await list(phi, `?updated_since=${encodeURIComponent('2029-12-31T23:59:59Z')}`);
  t.same(
    recent.data.map((p: { id: string }) => p.id),
    [sample.id],
  );
  t.equal((await get(phi, '/api/v1/ext/patients?status=alive')).statusCode, 400);
});

t.test('updated since finds a chart whose episode or coverage changed, not only its own columns', async (t) => {
  const [episode, coverage] = await Promise.all([
    db
      .selectFrom('episodes')
      .select(['id', 'patient_id'])
      .where('agency_id', '=', agencyId)
      .orderBy('id')
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('coverages')
      .select(['id', 'patient_id'])
      .where('agency_id', '=', agencyId)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow(),
  ]);
  const { rows } = await sql<{ now: Date }>`select now() as now`.execute(db);
  const since = encodeURIComponent(new Date(rows[0].now).toISOString());
  const changedIds = async () => (await walk(phi, `&updated_since=${since}`, 'cursor')).ids;
  t.notOk((await changedIds()).includes(episode.patient_id), 'not changed yet');
  await db
    .updateTable('episodes')
    // Relative to its own start: the seed dates episodes from today, so a fixed date can fall before it.
    .set({ end_date: sql<string>`start_date + 60` })
    .where('agency_id', '=', agencyId)
    .where('id', '=', episode.id)
    .execute();
  await db
    .updateTable('coverages')
    .set({ plan_name: 'Renamed plan' })
    .where('agency_id', '=', agencyId)
    .where('id', '=', coverage.id)
    .execute();
  const changed = await changedIds();
  t.ok(changed.includes(episode.patient_id), "the episode's chart");
  t.ok(changed.includes(coverage.patient_id), "the coverage's chart");
});

t.test('summary and detail profiles in a phi session', async (t) => {
  // Seeded ids are keyed by the agency, so the first active episode's chart may lack a phone: ask for one that has it.
  const withEpisode = await db
    .selectFrom('episodes')
    .innerJoin('patients', (j) =>
      j.onRef('patients.agency_id', '=', 'episodes.agency_id').onRef('patients.id', '=', 'episodes.patient_id'),
    )
    .select(['episodes.patient_id', 'episodes.id'])
    .where('episodes.agency_id', '=', agencyId)
    .where('episodes.status', '=', 'active')
    .where('patients.primary_phone', 'is not', null)
    .executeTakeFirstOrThrow();
  // Microseconds, which the detail's JSON carries and a Date cannot: the list's columns and the detail truncate them alike.
  await sql`update patients set updated_at = '2026-03-01 12:00:00.123987+00' where agency_id = ${agencyId} and id = ${withEpisode.patient_id}`.execute(
    db,
  );
  const row = await db
    .selectFrom('patients')
    .selectAll()
    .where('agency_id', '=', agencyId)
    .where('id', '=', withEpisode.patient_id)
    .executeTakeFirstOrThrow();
  const res = await get(phi, `/api/v1/ext/patients/${row.id}`);
  t.equal(res.statusCode, 200);
  t.equal(res.headers['cache-control'], 'no-store');
  const patient = res.json().data;
  t.match(patient, {
    id: row.id,
    mrn: row.mrn,
    first_name: row.first_name,
    last_name: row.last_name,
    dob: row.dob,
    status: row.status,
    office_id: row.office_id,
    current_episode: { id: withEpisode.id, status: 'active' },
  });
  t.equal(patient.birth_year, Number(row.dob!.slice(0, 4)));
  t.match(patient.display_name, new RegExp(`^${row.first_name} .*${row.last_name}`));
  t.same(patient.address, {
    line1: row.address_line_1,
    line2: row.address_line_2,
    city: row.city,
    state: row.state,
    zip_code: row.zip_code,
  });
  t.equal(patient.phones[0].number, row.primary_phone);

  const episodes = await db
    .selectFrom('episodes')
    .select('id')
    .where('agency_id', '=', agencyId)
    .where('patient_id', '=', row.id)
    .orderBy('start_date', 'desc')
    .orderBy('id', 'desc')
    .execute();
  t.same(
    patient.episodes.map((e: { id: string }) => e.id),
    episodes.map((e) => e.id),
    'episodes newest first',
  );
  const coverages = await db
    .selectFrom('coverages')
    .select(['id', 'coverage_order'])
    .where('agency_id', '=', agencyId)
    .where('patient_id', '=', row.id)
    .orderBy('coverage_order')
    .execute();
  t.same(
    patient.coverages.map((c: { id: string; is_primary: boolean }) => [c.id, c.is_primary]),
    coverages.map((c) => [c.id, c.coverage_order === 0]),
  );

  const summary =
    (await list(phi, `?limit=200`)).data.find((p: { id: string }) => p.id === row.id) ??
    (await list(phi, `?limit=200&offset=200`)).data.find((p: { id: string }) => p.id === row.id);
  t.notOk('phones' in summary, 'lists carry the summary profile');
  t.same(summary.current_episode, patient.current_episode);
  t.equal(patient.updated_at, '2026-03-01T12:00:00.123Z');
  t.same([summary.created_at, summary.updated_at], [patient.created_at, patient.updated_at]);
  t.same(
    patient.coordinates,
    row.latitude === null ? null : { latitude: Number(row.latitude), longitude: Number(row.longitude) },
  );
});

t.test('no_phi: handles, no names or contact details, dates to the year', async (t) => {
  const page = await list(noPhi, '?limit=200');
  t.equal(page.data.length, 200);
  for (const p of page.data) {
    t.match(p.id, /^PT-[0-9A-Z]{12}$/);
    t.match(p, {
      mrn: null,
      first_name: null,
      middle_name: null,
      last_name: null,
      suffix: null,
      display_name: null,
      dob: null,
    });
    t.match(p.created_at, /^\d{4}-01-01T00:00:00\.000Z$/);
    if (p.current_episode) t.match(p.current_episode.start_date, /^\d{4}-01-01$/);
    if (p.age === '90+') t.equal(p.birth_year, null);
  }
  t.ok(
    page.data.some((p: { age: string | null }) => p.age === '90+'),
    'the seed has patients over 89',
  );
  const again = await list(noPhi, '?limit=200');
  t.same(
    again.data.map((p: { id: string }) => p.id),
    page.data.map((p: { id: string }) => p.id),
    'handles are stable',
  );

  const handle = page.data.find((p: { current_episode: unknown }) => p.current_episode).id;
  const detail = await get(noPhi, `/api/v1/ext/patients/${handle}`);
  t.equal(detail.statusCode, 200);
  const patient = detail.json().data;
  t.match(patient, { id: handle, phones: [], coordinates: null, address: { line1: null, line2: null, city: null } });
  t.match(patient.address.zip_code ?? '000', /^\d{3}$/);
  for (const c of patient.coverages) t.match(c, { policy_number: null, group_number: null });
  for (const e of patient.episodes) t.match(e.start_date, /^\d{4}-01-01$/);
  t.equal(detail.headers['cache-control'], 'no-store');
});

t.test('no_phi sessions take handles only; other agencies see nothing', async (t) => {
  const realId = (await censusIds())[0];
  const real = await get(noPhi, `/api/v1/ext/patients/${realId}`);
  t.equal(real.statusCode, 404);
  t.equal(real.json().error.code, 'PLATFORM_PSEUDONYM_UNRESOLVED');

  const other = await signIn(api, { phiMode: 'phi' });
  const foreign = await get(other, `/api/v1/ext/patients/${realId}`);
  const unknown = await get(other, '/api/v1/ext/patients/pat_does_not_exist');
  t.equal(foreign.statusCode, 404);
  t.equal(foreign.json().error.code, 'PLATFORM_RESOURCE_NOT_FOUND');
  t.same(
    Object.keys(foreign.json().error.details),
    Object.keys(unknown.json().error.details),
    'answers exactly like an unknown id',
  );
  t.equal((await list(other)).meta.total, 0);

  const handle = (await list(noPhi, '?limit=1')).data[0].id;
  const otherNoPhi = await signIn(api, { phiMode: 'no_phi' });
  t.equal(
    (await get(otherNoPhi, `/api/v1/ext/patients/${handle}`)).json().error.code,
    'PLATFORM_PSEUDONYM_UNRESOLVED',
    'handles resolve only in their agency',
  );
});

t.test('contract version 1 names display_name full_name and has no birth_year or coordinates', async (t) => {
  const id = (await censusIds())[0];
  const res = await phi.request({
    method: 'GET',
    url: `/api/v1/ext/patients/${id}`,
    headers: { 'svc-contract-version': '1' },
  });
  const patient = res.json().data;
  t.ok(patient.full_name);
  t.notOk('display_name' in patient);
  t.notOk('birth_year' in patient);
  t.notOk('coordinates' in patient);
  const page = await phi.request({
    method: 'GET',
    url: '/api/v1/ext/patients?limit=1',
    headers: { 'svc-contract-version': '1' },
  });
  t.ok(page.json().data[0].full_name);
});

t.test('a page that skips no rows is one statement on patients, with its count; past an offset, two', async (t) => {
  const statements: string[] = [];
  t.teardown(database.observe({ statement: (query) => void statements.push(query.sql) }));
  const onPatients = async (query: string) => {
    statements.length = 0;
    const page = await list(phi, query);
    return [page, statements.filter((text) => /from "patients"/.test(text)).length] as const;
  };
  const [first, atStart] = await onPatients('?limit=20');
  t.equal(atStart, 1, 'offset 0');
  t.equal(first.data.length, 20);
  const [, byCursor] = await onPatients(`?limit=20&cursor=${encodeURIComponent(first.meta.next_cursor)}`);
  t.equal(byCursor, 1, 'after a cursor');
  const [atOffset, pastOffset] = await onPatients('?limit=20&offset=20');
  t.equal(pastOffset, 2, 'the name index first, then the page of charts');
  t.same(
    atOffset.data.map((p: { id: string }) => p.id),
    (await censusIds()).slice(20, 40),
  );
});
