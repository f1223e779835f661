import t from 'tap';
import type { Selectable } from 'kysely';
import { buildTestApp, signIn, type SignedInApi } from '../../helpers/app.js';
import { seededAgency } from '../../helpers/clinical.js';
import { testDatabase } from '../../helpers/database.js';
import { listPage, walkList, YEAR_ONLY_INSTANT, type Query } from '../../helpers/list-walk.js';
import type { ReferralsTable } from '../../../src/resources/referrals/referral-tables.js';

const { db } = await testDatabase();
const api = await buildTestApp();
const { agencyId, phi, noPhi } = await seededAgency(api);

const URL = '/api/v1/ext/referrals';
const get = (session: SignedInApi, id: string, headers: Record<string, string> = {}) =>
  session.request({ method: 'GET', url: `${URL}/${id}`, headers });
const ids = (items: { id: string }[]) => items.map((item) => item.id);
const utcDay = (at: Date) => at.toISOString().slice(0, 10);

/** Every referral of the agency in list order (newest referral_date first, then id), from the database. */
const stored: Selectable<ReferralsTable>[] = await db
  .selectFrom('referrals')
  .selectAll()
  .where('agency_id', '=', agencyId)
  .orderBy('referral_date', 'desc')
  .orderBy('id', 'desc')
  .execute();
const storedIds = (keep: (r: Selectable<ReferralsTable>) => boolean) => ids(stored.filter(keep));

const SUMMARY_KEYS = [
  'id',
  'patient_id',
  'intake_id',
  'service_line',
  'referral_type',
  'referral_type_category',
  'referral_date',
  'referral_source',
  'referral_source_id',
  'disposition',
  'decline_reason',
  'office_id',
  'patient_display_name',
  'created_at',
];

t.test('the list is summary profiles, newest referral first', async (t) => {
  const page = await listPage(phi, URL);
  t.match(page.meta, {
    total: stored.length,
    total_exact: true,
    limit: 50,
    offset: 0,
    has_more: true,
    next_offset: 50,
    next_cursor: String,
  });
  t.same(ids(page.data), ids(stored.slice(0, 50)));
  t.same(Object.keys(page.data[0]).sort(), [...SUMMARY_KEYS].sort(), 'summary profile only');
  const first = stored[0];
  t.same(page.data[0], {
    id: first.id,
    patient_id: first.patient_id,
    intake_id: first.intake_id,
    service_line: first.service_line,
    referral_type: first.referral_type,
    referral_type_category: first.referral_type_category,
    referral_date: first.referral_date.toISOString(),
    referral_source: first.referral_source,
    referral_source_id: first.referral_source_id,
    disposition: first.disposition,
    decline_reason: first.decline_reason,
    office_id: first.office_id,
    patient_display_name: first.patient_display_name,
    created_at: first.created_at.toISOString(),
  });
});

t.test('filters: disposition, type category, date range, source, patient, and together', async (t) => {
  const source = stored.find((r) => r.referral_source_id !== null)!.referral_source_id!;
  const patientId =
    stored.find((r, i) => r.patient_id !== null && stored.findIndex((o) => o.patient_id === r.patient_id) !== i)
      ?.patient_id ?? stored.find((r) => r.patient_id)!.patient_id!;
  const [from, to] = [utcDay(stored[60].referral_date), utcDay(stored[30].referral_date)];
  t.ok(
    stored.some((r) => r.referral_type_category === 'other' && r.referral_type !== 'other'),
    'types sent as other values are in the seed',
  );
  t.ok(
    stored.some((r) => utcDay(r.referral_date) === to && r.referral_date.toISOString() > `${to}T00:00:00.000Z`),
    'the last day has referrals after midnight',
  );
  const cases: [Query, (r: Selectable<ReferralsTable>) => boolean][] = [
    [{ disposition: 'declined' }, (r) => r.disposition === 'declined'],
    [{ referral_type: 'other' }, (r) => r.referral_type_category === 'other'],
    [{ referral_type: 'soc' }, (r) => r.referral_type_category === 'soc'],
    [
      { referral_date_from: from, referral_date_to: to },
      (r) => utcDay(r.referral_date) >= from && utcDay(r.referral_date) <= to,
    ],
    [{ referral_date_to: to }, (r) => utcDay(r.referral_date) <= to],
    [{ referral_source_id: source }, (r) => r.referral_source_id === source],
    [{ patient_id: patientId }, (r) => r.patient_id === patientId],
    [
      { disposition: 'accepted', referral_type: 'roc', referral_date_from: from },
      (r) => r.disposition === 'accepted' && r.referral_type_category === 'roc' && utcDay(r.referral_date) >= from,
    ],
  ];
  for (const [query, keep] of cases) {
    const expected = storedIds(keep);
    t.ok(expected.length > 0 && expected.length < stored.length, `${JSON.stringify(query)} selects some referrals`);
    const walked = await walkList(phi, URL, query, 'offset');
    t.same(walked.ids, expected, JSON.stringify(query));
    t.equal(walked.last.total, expected.length);
  }
  const none = await phi.request({ method: 'GET', url: URL, query: { referral_type: 'transfer' } });
  t.equal(none.statusCode, 400, 'referral_type filters on the category');
});

t.test('paging: offset pages, cursor walk, and mistakes are 400s', async (t) => {
  const page = await listPage(phi, URL, { limit: '7', offset: '7' });
  t.same(ids(page.data), ids(stored.slice(7, 14)));
  t.match(page.meta, { limit: 7, offset: 7, has_more: true, next_offset: 14 });
  const last = await listPage(phi, URL, { limit: '10', offset: String(stored.length - 3) });
  t.same(ids(last.data), ids(stored.slice(-3)));
  t.match(last.meta, { has_more: false, next_offset: null, next_cursor: null });

  const byOffset = await walkList(phi, URL, {}, 'offset', 45);
  const byCursor = await walkList(phi, URL, {}, 'cursor', 45);
  t.same(byOffset.ids, ids(stored));
  t.same(byCursor.ids, byOffset.ids, 'the cursor walk returns exactly the offset walk');
  t.equal(byCursor.last.total, stored.length);

  const status = async (query: Query) => (await phi.request({ method: 'GET', url: URL, query })).statusCode;
  t.equal(await status({ limit: '201' }), 400);
  t.equal(await status({ cursor: page.meta.next_cursor, offset: '5' }), 400);
  t.equal(await status({ cursor: 'not-a-cursor' }), 400);
});

t.test('the detail profile by id', async (t) => {
  const links = await db
    .selectFrom('referral_documents')
    .select(['referral_id', 'document_id'])
    .where('agency_id', '=', agencyId)
    .orderBy('position')
    .execute();
  const row = stored.find(
    (r) => Object.keys(r.additional_fields).length > 0 && links.filter((l) => l.referral_id === r.id).length > 1,
  )!;
  t.ok(row, 'a referral with additional fields and documents');
  const res = await get(phi, row.id);
  t.equal(res.statusCode, 200);
  const summary = (await listPage(phi, URL, { limit: '200', offset: String(stored.indexOf(row)) })).data[0];
  t.match(res.json().data, {
    ...summary,
    decline_detail: row.decline_detail,
    request_shape: row.request_shape,
    zip_code: row.zip_code,
    referring_facility: row.referring_facility,
    referring_physician: row.referring_physician,
    referring_physician_id: row.referring_physician_id,
    signing_physician_id: row.signing_physician_id,
    certifying_physician_id: row.certifying_physician_id,
    payor_id: row.payor_id,
    hospital_id: row.hospital_id,
    marketer_id: row.marketer_id,
    marketer_label: row.marketer_label,
    source_system: row.source_system,
    external_reference_id: row.external_reference_id,
  });
  t.same(
    res.json().data.document_ids,
    links.filter((l) => l.referral_id === row.id).map((l) => l.document_id),
    'documents in the order sent',
  );
  t.same(res.json().data.additional_fields, row.additional_fields);
});

t.test('no_phi: no names or full dates, handles for patients, ZIP to three digits', async (t) => {
  const names = stored.map((r) => r.patient_display_name).filter((n): n is string => n !== null);
  const walked = await walkList(noPhi, URL, {}, 'cursor');
  t.same(walked.ids, ids(stored), 'same referrals, same order');
  const page = await listPage(noPhi, URL, { limit: '200' });
  const body = JSON.stringify(page);
  t.same(
    names.filter((name) => body.includes(name)),
    [],
    'no patient name appears',
  );
  for (const item of page.data) {
    const row = stored.find((r) => r.id === item.id)!;
    t.equal(item.patient_display_name, null);
    t.match(item, { referral_date: YEAR_ONLY_INSTANT, created_at: YEAR_ONLY_INSTANT });
    t.ok(row.patient_id === null ? item.patient_id === null : /^PT-/.test(item.patient_id), 'patients are handles');
  }
  const declined = stored.find((r) => r.decline_reason === 'out_of_area')!;
  const detail = (await get(noPhi, declined.id)).json().data;
  t.match(detail, {
    decline_reason: 'out_of_area',
    decline_detail: null,
    zip_code: /^\d{3}$/,
    external_reference_id: null,
    patient_display_name: null,
  });
  const extra = stored.find((r) => Object.keys(r.additional_fields).length > 0)!;
  t.same((await get(noPhi, extra.id)).json().data.additional_fields, {});
});

t.test('no_phi: a handle filters by patient, a real id is refused, date ranges are whole years', async (t) => {
  const row = stored.find((r) => r.patient_id !== null)!;
  const handle = (await get(noPhi, row.id)).json().data.patient_id;
  t.match(handle, /^PT-/);
  const byHandle = await walkList(noPhi, URL, { patient_id: handle }, 'offset');
  t.same(
    byHandle.ids,
    storedIds((r) => r.patient_id === row.patient_id),
  );
  const real = await noPhi.request({ method: 'GET', url: URL, query: { patient_id: row.patient_id! } });
  t.equal(real.statusCode, 404);
  t.equal(real.json().error.code, 'PLATFORM_PSEUDONYM_UNRESOLVED');

  const year = stored[0].referral_date.getUTCFullYear();
  const wholeYear = await walkList(
    noPhi,
    URL,
    { referral_date_from: `${year}-01-01`, referral_date_to: `${year}-12-31` },
    'offset',
  );
  t.same(
    wholeYear.ids,
    storedIds((r) => r.referral_date.getUTCFullYear() === year),
  );
  const narrowRanges: Query[] = [{ referral_date_from: `${year}-03-01` }, { referral_date_to: `${year}-06-30` }];
  for (const query of narrowRanges) {
    const narrow = await noPhi.request({ method: 'GET', url: URL, query });
    t.equal(narrow.statusCode, 400, JSON.stringify(query));
    t.match(narrow.json().error, { code: 'PLATFORM_INVALID_INPUT', details: { field: Object.keys(query)[0] } });
  }
});

t.test('another agency gets 404 for a referral id, exactly as for an unknown id, and an empty list', async (t) => {
  const other = await signIn(api);
  const foreign = await get(other, stored[0].id);
  const unknown = await get(other, 'ref_doesnotexist');
  t.equal(foreign.statusCode, 404);
  t.match(foreign.json().error, {
    code: 'PLATFORM_RESOURCE_NOT_FOUND',
    details: { resource_type: 'referral', id: stored[0].id },
  });
  t.same(
    { ...foreign.json().error, message: '', details: {}, correlationId: '' },
    { ...unknown.json().error, message: '', details: {}, correlationId: '' },
  );
  t.match((await listPage(other, URL)).meta, { total: 0, has_more: false });
  t.equal((await listPage(other, URL, { patient_id: stored.find((r) => r.patient_id)!.patient_id! })).data.length, 0);
});

t.test('contract version 1 names referral_date referred_at and has no version 2 fields', async (t) => {
  const v1 = { 'svc-contract-version': '1' };
  const page = (await phi.request({ method: 'GET', url: URL, headers: v1 })).json();
  t.equal(page.data[0].referred_at, stored[0].referral_date.toISOString());
  t.notOk('referral_date' in page.data[0]);
  t.notOk('referral_type_category' in page.data[0]);
  const detail = (await get(phi, stored[0].id, v1)).json().data;
  t.equal(detail.referred_at, stored[0].referral_date.toISOString());
  t.notOk('additional_fields' in detail);
});
