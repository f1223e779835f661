import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { buildTestApp, signIn, type Response, type SignedInApi } from '../../helpers/app.js';
import { seededAgency } from '../../helpers/clinical.js';
import { testDatabase } from '../../helpers/database.js';
import type { VisitStatus } from '../../../src/resources/visits/visit-tables.js';
import { paging } from '../../../src/generated/contract.js';

const { db } = await testDatabase();
const api = await buildTestApp();
const { agencyId, phi, noPhi } = await seededAgency(api);

type Query = Record<string, string | number>;
type Item = Record<string, unknown> & { id: string; patient_id: string };

const SUMMARY_FIELDS = [
  'id',
  'patient_id',
  'episode_id',
  'discipline',
  'visit_type',
  'status',
  'scheduled_start',
  'scheduled_end',
  'actual_start',
  'actual_end',
  'clinician_id',
  'clinician_name',
  'office_id',
  'updated_at',
];
const DETAIL_FIELDS = [
  ...SUMMARY_FIELDS,
  'service_code',
  'duration_minutes',
  'evv_status',
  'documentation_status',
  'missed_reason',
  'cancellation_reason',
];
const TIME_FIELDS = ['scheduled_start', 'scheduled_end', 'actual_start', 'actual_end', 'updated_at'];

function list(session: SignedInApi, query: Query = {}, headers: Record<string, string> = {}): Promise<Response> {
  const search = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
  return session.request({ method: 'GET', url: `/api/v1/ext/visits?${search}`, headers });
}

const get = (session: SignedInApi, id: string, headers: Record<string, string> = {}) =>
  session.request({ method: 'GET', url: `/api/v1/ext/visits/${id}`, headers });
const ids = (res: Response): string[] => res.json().data.map((item: Item) => item.id);

/** The agency's visits straight from the database, in schedule order. */
function storedVisits() {
  return db
    .selectFrom('visits')
    .selectAll()
    .where('agency_id', '=', agencyId)
    .orderBy('scheduled_start')
    .orderBy('id')
    .execute();
}

const allVisits = await storedVisits();
const someVisit = (status: VisitStatus) => allVisits.find((v) => v.status === status && v.clinician_id !== null)!;

/** Every page of a list, following meta.next_offset or meta.next_cursor. */
async function walk(
  session: SignedInApi,
  query: Query,
  by: 'offset' | 'cursor',
): Promise<{ ids: string[]; totals: number[] }> {
  const seen: string[] = [];
  const totals: number[] = [];
  let next: Query = {};
  for (;;) {
    const res = await list(session, { ...query, ...next });
    seen.push(...ids(res));
    const { meta } = res.json();
    totals.push(meta.total);
    const more = by === 'offset' ? meta.next_offset : meta.next_cursor;
    if (more === null) return { ids: seen, totals };
    next = { [by]: more };
  }
}

async function clinicianName(clinicianId: string | null): Promise<string | null> {
  if (clinicianId === null) return null;
  const user = await db
    .selectFrom('agency_users')
    .select(['first_name', 'last_name'])
    .where('agency_id', '=', agencyId)
    .where('id', '=', clinicianId)
    .executeTakeFirstOrThrow();
  return `${user.first_name} ${user.last_name}`;
}

const yearOf = (iso: unknown) => (iso === null ? null : `${String(iso).slice(0, 4)}-01-01T00:00:00.000Z`);

t.test('the list gives summary profiles in schedule order with PageMeta', async (t) => {
  const res = await list(phi);
  t.equal(res.statusCode, 200);
  const { data, meta } = res.json();
  t.same(
    ids(res),
    allVisits.slice(0, 50).map((v) => v.id),
  );
  t.match(meta, {
    total: allVisits.length,
    limit: 50,
    offset: 0,
    has_more: true,
    next_offset: 50,
    next_cursor: String,
  });
  for (const item of data) t.same(Object.keys(item).sort(), [...SUMMARY_FIELDS].sort(), 'summary profile only');
  const stored = allVisits[0];
  t.match(data[0], {
    patient_id: stored.patient_id,
    scheduled_start: stored.scheduled_start.toISOString(),
    scheduled_end: stored.scheduled_end.toISOString(),
    clinician_id: stored.clinician_id,
    clinician_name: await clinicianName(stored.clinician_id),
  });
});

t.test('a visit by id gives the detail profile, whose summary part matches the list', async (t) => {
  const stored = someVisit('completed');
  const res = await get(phi, stored.id);
  t.equal(res.statusCode, 200);
  const visit = res.json().data;
  t.same(Object.keys(visit).sort(), [...DETAIL_FIELDS].sort());
  t.match(visit, {
    id: stored.id,
    patient_id: stored.patient_id,
    episode_id: stored.episode_id,
    status: 'completed',
    actual_start: stored.actual_start!.toISOString(),
    actual_end: stored.actual_end!.toISOString(),
    updated_at: stored.updated_at.toISOString(),
    service_code: stored.service_code,
    duration_minutes: stored.duration_minutes,
    evv_status: stored.evv_status,
    documentation_status: stored.documentation_status,
    clinician_name: await clinicianName(stored.clinician_id),
  });
  const listed = (await list(phi, { patient_id: stored.patient_id, limit: 200 }))
    .json()
    .data.find((item: Item) => item.id === stored.id);
  t.same(Object.fromEntries(SUMMARY_FIELDS.map((f) => [f, visit[f]])), listed);
});

t.test('missed and cancelled visits say why in phi sessions', async (t) => {
  const missed = someVisit('missed');
  const cancelled = someVisit('cancelled');
  t.ok(missed.missed_reason && cancelled.cancellation_reason, 'the seed records reasons');
  t.match((await get(phi, missed.id)).json().data, { missed_reason: missed.missed_reason, cancellation_reason: null });
  t.match((await get(phi, cancelled.id)).json().data, {
    missed_reason: null,
    cancellation_reason: cancelled.cancellation_reason,
  });
});

t.test('each filter narrows the list to exactly the matching visits', async (t) => {
  const sample = someVisit('completed');
  const windowStart = allVisits[Math.floor(allVisits.length / 2)].scheduled_start;
  const windowEnd = new Date(windowStart.getTime() + 3 * 86_400_000);
  const cases: [Query, (v: (typeof allVisits)[number]) => boolean][] = [
    [{ patient_id: sample.patient_id }, (v) => v.patient_id === sample.patient_id],
    [{ discipline: 'PT' }, (v) => v.discipline === 'PT'],
    [{ status: 'missed' }, (v) => v.status === 'missed'],
    [{ clinician_id: sample.clinician_id! }, (v) => v.clinician_id === sample.clinician_id],
    [
      { scheduled_from: windowStart.toISOString(), scheduled_to: windowEnd.toISOString() },
      (v) => v.scheduled_start >= windowStart && v.scheduled_start < windowEnd,
    ],
    [{ scheduled_from: windowStart.toISOString() }, (v) => v.scheduled_start >= windowStart],
    [
      { scheduled_to: windowStart.toISOString(), discipline: 'SN', status: 'completed' },
      (v) => v.scheduled_start < windowStart && v.discipline === 'SN' && v.status === 'completed',
    ],
  ];
  for (const [query, matches] of cases) {
    const expected = allVisits.filter(matches).map((v) => v.id);
    t.ok(expected.length > 0 && expected.length < allVisits.length, `${JSON.stringify(query)} is a real narrowing`);
    const res = await list(phi, { ...query, limit: 200 });
    const { meta } = res.json();
    if (expected.length <= paging.exact_total_max)
      t.same([meta.total, meta.total_exact], [expected.length, true], `${JSON.stringify(query)} total`);
    else
      t.same(
        [meta.total > paging.exact_total_max, meta.total_exact],
        [true, false],
        `${JSON.stringify(query)} total, an estimate`,
      );
    t.same(ids(res), expected.slice(0, 200), `${JSON.stringify(query)} ids`);
  }
});

t.test('scheduled_from is inclusive, scheduled_to exclusive, and they must be in order', async (t) => {
  const visit = allVisits[100];
  const at = visit.scheduled_start.toISOString();
  t.ok(ids(await list(phi, { scheduled_from: at, limit: 200 })).includes(visit.id));
  t.notOk(ids(await list(phi, { scheduled_to: at, limit: 200 })).includes(visit.id));
  for (const to of [at, '2020-01-01T00:00:00Z']) {
    const res = await list(phi, { scheduled_from: at, scheduled_to: to });
    t.equal(res.statusCode, 400);
    t.match(res.json().error, { code: 'PLATFORM_INVALID_INPUT', details: { field: 'scheduled_to' } });
  }
  t.equal((await list(phi, { scheduled_from: 'yesterday' })).statusCode, 400, 'not a date-time');
});

t.test('offset paging: limit, offset, next_offset, has_more and the last page', async (t) => {
  const page = await list(phi, { limit: 20, offset: 40 });
  t.same(
    ids(page),
    allVisits.slice(40, 60).map((v) => v.id),
  );
  t.match(page.json().meta, { limit: 20, offset: 40, has_more: true, next_offset: 60 });
  const last = await list(phi, { limit: 20, offset: allVisits.length - 5 });
  t.same(
    ids(last),
    allVisits.slice(-5).map((v) => v.id),
  );
  t.match(last.json().meta, { has_more: false, next_offset: null, next_cursor: null });
  t.equal((await list(phi, { limit: 200 })).json().data.length, 200);
  t.equal((await list(phi, { limit: 201 })).statusCode, 400, 'a larger page is refused, not capped');
});

t.test('a cursor walk of a filtered list returns exactly the ids of an offset walk', async (t) => {
  const query = { discipline: 'SN', limit: 97 };
  const expected = allVisits.filter((v) => v.discipline === 'SN').map((v) => v.id);
  const byOffset = await walk(phi, query, 'offset');
  const byCursor = await walk(phi, query, 'cursor');
  t.ok(byCursor.totals.length > 2, 'several pages');
  t.same(byOffset.ids, expected);
  t.same(byCursor.ids, expected);
  t.ok(
    byCursor.totals.every((total) => total === expected.length),
    'cursor pages carry the first page total',
  );
});

t.test('cursor misuse is a 400', async (t) => {
  const cursor = (await list(phi)).json().meta.next_cursor;
  const both = await list(phi, { cursor, offset: 10 });
  t.equal(both.statusCode, 400);
  t.match(both.json().error, { code: 'PLATFORM_INVALID_INPUT', details: { field: 'offset' } });
  const garbage = await list(phi, { cursor: 'not-a-cursor' });
  t.equal(garbage.statusCode, 400);
  t.match(garbage.json().error, { code: 'PLATFORM_INVALID_INPUT', details: { field: 'cursor' } });
});

t.test('no_phi lists carry stable patient handles and year-only times', async (t) => {
  const pages: { real: Item[]; masked: Item[] }[] = [];
  for (const offset of [0, 200]) {
    pages.push({
      real: (await list(phi, { limit: 200, offset })).json().data,
      masked: (await list(noPhi, { limit: 200, offset })).json().data,
    });
  }
  const stored = await db
    .selectFrom('pseudonyms')
    .select(['real_id', 'handle'])
    .where('agency_id', '=', agencyId)
    .where('kind', '=', 'patient')
    .execute();
  const handleOf = new Map(stored.map((p) => [p.real_id, p.handle]));
  for (const { real, masked } of pages) {
    const reduced = real.map((v) => ({
      ...v,
      patient_id: handleOf.get(v.patient_id),
      ...Object.fromEntries(TIME_FIELDS.map((f) => [f, yearOf(v[f])])),
    }));
    t.same(masked, reduced, 'the phi page with handles for patient ids and times reduced to the year');
  }
  const [first, second] = pages.map(({ real }) => new Set(real.map((v) => v.patient_id)));
  t.ok(
    [...first].some((id) => second.has(id)),
    'some patients are on both pages, under one handle',
  );
  t.ok([...handleOf.values()].every((handle) => handle.startsWith('PT-')));
  t.equal(new Set(handleOf.values()).size, handleOf.size, 'different patients, different handles');
});

t.test("a no_phi cursor does not reveal the exact time of the page's last visit", async (t) => {
  const cursor = (await list(noPhi)).json().meta.next_cursor;
  t.notOk(Buffer.from(cursor, 'base64url').toString('utf8').includes(allVisits[49].scheduled_start.toISOString()));
});

t.test('no_phi filters take patient handles and year boundaries only', async (t) => {
  const sample = someVisit('completed');
  const handle = (await get(noPhi, sample.id)).json().data.patient_id;
  const filtered = await list(noPhi, { patient_id: handle, limit: 200 });
  t.same(
    ids(filtered),
    allVisits.filter((v) => v.patient_id === sample.patient_id).map((v) => v.id),
  );
  t.ok(filtered.json().data.every((v: Item) => v.patient_id === handle));
  const realId = await list(noPhi, { patient_id: sample.patient_id });
  t.equal(realId.statusCode, 404);
  t.equal(realId.json().error.code, 'PLATFORM_PSEUDONYM_UNRESOLVED', 'a real id cannot be used in no_phi');

  const nextYear = await list(noPhi, { scheduled_from: '2027-01-01T00:00:00Z' });
  t.equal(
    nextYear.json().meta.total,
    allVisits.filter((v) => v.scheduled_start >= new Date('2027-01-01T00:00:00Z')).length,
  );
  const exact = await list(noPhi, { scheduled_to: sample.scheduled_start.toISOString() });
  t.equal(exact.statusCode, 400, 'a finer bound would reveal visit dates');
  t.match(exact.json().error, { code: 'PLATFORM_INVALID_INPUT', details: { field: 'scheduled_to' } });
});

t.test('no_phi detail: handle, year-only times, no free-text reasons', async (t) => {
  for (const stored of [someVisit('missed'), someVisit('cancelled'), someVisit('completed')]) {
    const [real, masked] = [(await get(phi, stored.id)).json().data, (await get(noPhi, stored.id)).json().data];
    const handle = await db
      .selectFrom('pseudonyms')
      .select('handle')
      .where('agency_id', '=', agencyId)
      .where('real_id', '=', stored.patient_id)
      .executeTakeFirstOrThrow();
    t.equal(masked.patient_id, handle.handle);
    for (const field of TIME_FIELDS) t.equal(masked[field], yearOf(real[field]), field);
    t.match(masked, {
      missed_reason: null,
      cancellation_reason: null,
      service_code: real.service_code,
      status: real.status,
    });
  }
});

t.test('another agency gets 404 for a visit id, exactly as for an unknown id, and an empty list', async (t) => {
  const other = await signIn(api);
  const visit = someVisit('completed');
  const foreign = await get(other, visit.id);
  const unknown = await get(other, 'visit_doesnotexist');
  t.equal(foreign.statusCode, 404);
  t.match(foreign.json().error, {
    code: 'PLATFORM_RESOURCE_NOT_FOUND',
    details: { resource_type: 'visit', id: visit.id },
  });
  t.same(
    { ...foreign.json().error, message: '', details: {}, correlationId: '' },
    { ...unknown.json().error, message: '', details: {}, correlationId: '' },
  );
  t.equal((await list(other)).json().meta.total, 0);
  t.equal((await list(other, { patient_id: visit.patient_id })).json().meta.total, 0);
});

t.test('contract version 1: scheduled_at, no clinician_name or evv_status', async (t) => {
  const v1 = { 'svc-contract-version': '1' };
  const listed = await list(phi, { limit: 5 }, v1);
  t.ok(listed.headers.deprecation);
  for (const item of listed.json().data) {
    t.match(item, { scheduled_at: String, scheduled_end: String });
    t.notOk('scheduled_start' in item || 'clinician_name' in item);
  }
  const visit = (await get(noPhi, listed.json().data[0].id, v1)).json().data;
  t.equal(visit.scheduled_at, yearOf(allVisits[0].scheduled_start.toISOString()));
  t.notOk('scheduled_start' in visit || 'clinician_name' in visit || 'evv_status' in visit);
  t.match(visit, { documentation_status: String });
});

t.test('the audit trail names the visits returned', async (t) => {
  const res = await list(phi, { status: 'missed', limit: 3 });
  const requestId = String(res.headers['x-request-id']);
  const audited = async () =>
    db
      .selectFrom('audit_events')
      .selectAll()
      .where('agency_id', '=', agencyId)
      .where('request_id', '=', requestId)
      .executeTakeFirst();
  const deadline = Date.now() + 3_000;
  let row = await audited();
  while (!row && Date.now() < deadline) {
    await sleep(20);
    row = await audited();
  }
  t.match(row, { resource_type: 'visit' });
  t.same(row?.resource_ids, ids(res));
});
