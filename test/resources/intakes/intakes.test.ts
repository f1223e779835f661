import t from 'tap';
import { buildTestApp, signIn, type SignedInApi } from '../../helpers/app.js';
import { seededAgency } from '../../helpers/clinical.js';
import { testDatabase } from '../../helpers/database.js';
import { listPage, walkList, YEAR_ONLY_INSTANT, type Query } from '../../helpers/list-walk.js';
import type { IntakeStatus } from '../../../src/resources/intakes/intake-tables.js';
import { birthDateToYear } from '../../../src/domain/deidentify.js';

const { db } = await testDatabase();
const api = await buildTestApp();
const { agencyId, phi, noPhi } = await seededAgency(api);

const URL = '/api/v1/ext/intakes';
const get = (session: SignedInApi, id: string, headers: Record<string, string> = {}) =>
  session.request({ method: 'GET', url: `${URL}/${id}`, headers });
const ids = (items: { id: string }[]) => items.map((item) => item.id);

/** Every intake of the agency with its referral, in list order (newest received first, then id), from the database. */
const stored = await db
  .selectFrom('intakes')
  .innerJoin('referrals', (join) =>
    join.onRef('referrals.agency_id', '=', 'intakes.agency_id').onRef('referrals.id', '=', 'intakes.referral_id'),
  )
  .selectAll('intakes')
  .select([
    'referrals.patient_id',
    'referrals.service_line',
    'referrals.disposition',
    'referrals.office_id',
    'referrals.decline_reason',
    'referrals.decline_detail',
    'referrals.patient_display_name',
  ])
  .where('intakes.agency_id', '=', agencyId)
  .orderBy('intakes.received_at', 'desc')
  .orderBy('intakes.id', 'desc')
  .execute();
type StoredIntake = (typeof stored)[number];
const storedIds = (keep: (r: StoredIntake) => boolean) => ids(stored.filter(keep));

const STATUSES: IntakeStatus[] = [
  'pending_review',
  'in_review',
  'awaiting_information',
  'accepted',
  'declined',
  'admitted',
  'non_admit',
  'cancelled',
];

function expectedSummary(row: StoredIntake) {
  return {
    id: row.id,
    referral_id: row.referral_id,
    patient_id: row.patient_id,
    status: row.status,
    service_line: row.service_line,
    disposition: row.disposition,
    office_id: row.office_id,
    reviewer_id: row.reviewer_id,
    missing_information: row.missing_information,
    received_at: row.received_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

t.test('the list is summary profiles, newest intake first, with the referral patient', async (t) => {
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
  t.same(page.data, stored.slice(0, 50).map(expectedSummary));
});

t.test('filters: every status, referral, patient, and together', async (t) => {
  for (const status of STATUSES) {
    const expected = storedIds((r) => r.status === status);
    t.ok(expected.length > 0, `the seed has ${status} intakes`);
    t.same((await walkList(phi, URL, { status }, 'offset')).ids, expected, status);
  }
  const twice = stored.find(
    (r, i) => r.patient_id !== null && stored.findIndex((o) => o.patient_id === r.patient_id) !== i,
  )!;
  t.ok(twice, 'a patient with two intakes');
  const cases: [Query, (r: StoredIntake) => boolean][] = [
    [{ referral_id: stored[5].referral_id }, (r) => r.id === stored[5].id],
    [{ patient_id: twice.patient_id! }, (r) => r.patient_id === twice.patient_id],
    [
      { patient_id: twice.patient_id!, status: twice.status },
      (r) => r.patient_id === twice.patient_id && r.status === twice.status,
    ],
  ];
  for (const [query, keep] of cases) {
    const walked = await walkList(phi, URL, query, 'cursor');
    t.same(walked.ids, storedIds(keep), JSON.stringify(query));
    t.equal(walked.last.total, walked.ids.length);
  }
  t.equal((await phi.request({ method: 'GET', url: URL, query: { status: 'approved' } })).statusCode, 400);
});

t.test('paging: offset pages, cursor walk, and mistakes are 400s', async (t) => {
  const page = await listPage(phi, URL, { limit: '9', offset: '18' });
  t.same(ids(page.data), ids(stored.slice(18, 27)));
  t.match(page.meta, { limit: 9, offset: 18, has_more: true, next_offset: 27 });
  const byOffset = await walkList(phi, URL, {}, 'offset', 60);
  const byCursor = await walkList(phi, URL, {}, 'cursor', 60);
  t.same(byOffset.ids, ids(stored));
  t.same(byCursor.ids, byOffset.ids, 'the cursor walk returns exactly the offset walk');
  t.match(byCursor.last, { has_more: false, next_offset: null, next_cursor: null, total: stored.length });

  const status = async (query: Query) => (await phi.request({ method: 'GET', url: URL, query })).statusCode;
  t.equal(await status({ limit: '201' }), 400);
  t.equal(await status({ cursor: page.meta.next_cursor, offset: '9' }), 400);
  t.equal(await status({ cursor: Buffer.from('[["x"],1,2]').toString('base64url') }), 400);
});

/** A fully filled intake: a dependent coverage with its holder, notes, custom data and documents. */
async function richIntake() {
  const links = await db
    .selectFrom('referral_documents')
    .select(['referral_id', 'document_id'])
    .where('agency_id', '=', agencyId)
    .orderBy('position')
    .execute();
  const documentsOf = (referralId: string) =>
    links.filter((l) => l.referral_id === referralId).map((l) => l.document_id);
  const row = stored.find(
    (r) =>
      r.insurance.some((c) => c.policy_holder?.last_name && c.policy_holder.dob) &&
      r.notes &&
      Object.keys(r.custom_data).length > 0 &&
      documentsOf(r.referral_id).length > 1,
  )!;
  return { row, documentIds: documentsOf(row.referral_id) };
}

t.test('the detail profile by id', async (t) => {
  const { row, documentIds } = await richIntake();
  t.ok(row, 'a fully filled intake');
  const data = (await get(phi, row.id)).json().data;
  t.same(data, {
    ...expectedSummary(row),
    decline_reason: row.decline_reason,
    decline_detail: row.decline_detail,
    insurance: row.insurance.map((c) => ({ ...c, is_primary: c.coverage_order === 0 })),
    insurance_notes: row.insurance_notes,
    diagnoses: row.diagnoses,
    document_ids: documentIds,
    custom_data: row.custom_data,
    notes: row.notes,
  });
  const declined = stored.find((r) => r.decline_reason === 'out_of_area')!;
  t.match((await get(phi, declined.id)).json().data, {
    disposition: 'declined',
    decline_reason: 'out_of_area',
    decline_detail: declined.decline_detail,
    patient_id: null,
  });
});

t.test('no_phi list: handles for patients, dates to the year, no names', async (t) => {
  const names = stored.map((r) => r.patient_display_name).filter((n): n is string => n !== null);
  t.ok(stored.length <= 400, 'two pages hold the list');
  const pages = await Promise.all(
    [0, 200].map((offset) => listPage(noPhi, URL, { limit: '200', offset: String(offset) })),
  );
  const items = pages.flatMap((p) => p.data);
  t.same(ids(items), ids(stored));
  t.same(
    names.filter((name) => JSON.stringify(pages).includes(name)),
    [],
    'no patient name appears',
  );
  const handles = new Map<string, string>();
  for (const [i, item] of items.entries()) {
    t.match(item, { received_at: YEAR_ONLY_INSTANT, updated_at: YEAR_ONLY_INSTANT });
    const realId = stored[i].patient_id;
    t.ok(realId === null ? item.patient_id === null : /^PT-/.test(item.patient_id), 'patients are handles');
    if (realId) t.equal(handles.get(realId) ?? item.patient_id, item.patient_id, 'one handle per patient');
    if (realId) handles.set(realId, item.patient_id);
  }
});

t.test('no_phi detail: free text, numbers and the policy holder reduced per Safe Harbor', async (t) => {
  const { row, documentIds } = await richIntake();
  const data = (await get(noPhi, row.id)).json().data;
  t.match(data, {
    notes: null,
    insurance_notes: null,
    custom_data: {},
    received_at: YEAR_ONLY_INSTANT,
    patient_id: /^PT-/,
    document_ids: documentIds,
  });
  t.same(Object.keys(data.custom_data), []);
  t.same(
    data.diagnoses,
    row.diagnoses.map((d) => ({ ...d, ...(d.description === undefined ? {} : { description: '' }) })),
    'codes kept, free-text descriptions withheld',
  );
  for (const [i, coverage] of data.insurance.entries()) {
    const sent = row.insurance[i];
    t.match(coverage, {
      policy_number: null,
      group_number: null,
      plan_name: null,
      other_insurance_name: null,
      payor_id: sent.payor_id,
      coverage_order: sent.coverage_order,
    });
    t.equal(coverage.effective_date, sent.effective_date && `${sent.effective_date.slice(0, 4)}-01-01`);
    if (!sent.policy_holder) continue;
    t.match(coverage.policy_holder, {
      first_name: null,
      last_name: null,
      middle_name: null,
      suffix: null,
      relationship_to_insured: sent.policy_holder.relationship_to_insured,
      address: { line1: null, line2: null, city: null, state: sent.policy_holder.address.state, zip_code: /^\d{3}$/ },
    });
    const { dob } = sent.policy_holder;
    t.equal(
      coverage.policy_holder.dob,
      birthDateToYear(dob, new Date()),
      'holder birth year, withheld from 90 years back',
    );
  }
  const body = JSON.stringify(data);
  const holderNames = row.insurance
    .flatMap((c) => [c.policy_holder?.last_name, c.policy_holder?.address.line1])
    .filter((v): v is string => !!v);
  t.ok(holderNames.length > 0);
  t.same(
    holderNames.filter((v) => body.includes(v)),
    [],
    'no holder name or street',
  );
  const declined = stored.find((r) => r.decline_reason === 'out_of_area')!;
  t.match((await get(noPhi, declined.id)).json().data, { decline_reason: 'out_of_area', decline_detail: null });
});

t.test('no_phi: a handle filters by patient, a real id is refused', async (t) => {
  const row = stored.find((r) => r.patient_id !== null)!;
  const handle = (await get(noPhi, row.id)).json().data.patient_id;
  t.same(
    (await walkList(noPhi, URL, { patient_id: handle }, 'offset')).ids,
    storedIds((r) => r.patient_id === row.patient_id),
  );
  const real = await noPhi.request({ method: 'GET', url: URL, query: { patient_id: row.patient_id! } });
  t.equal(real.statusCode, 404);
  t.equal(real.json().error.code, 'PLATFORM_PSEUDONYM_UNRESOLVED');
  const foreignHandle = await (await signIn(api, { phiMode: 'no_phi' })).request({
    method: 'GET',
    url: URL,
    query: { patient_id: handle },
  });
  t.equal(
    foreignHandle.json().error.code,
    'PLATFORM_PSEUDONYM_UNRESOLVED',
    "another agency's session cannot use the handle",
  );
});

t.test('another agency gets 404 for an intake id, exactly as for an unknown id, and an empty list', async (t) => {
  const other = await signIn(api);
  const foreign = await get(other, stored[0].id);
  const unknown = await get(other, 'int_doesnotexist');
  t.equal(foreign.statusCode, 404);
  t.match(foreign.json().error, {
    code: 'PLATFORM_RESOURCE_NOT_FOUND',
    details: { resource_type: 'intake', id: stored[0].id },
  });
  t.same(
    { ...foreign.json().error, message: '', details: {}, correlationId: '' },
    { ...unknown.json().error, message: '', details: {}, correlationId: '' },
  );
  t.match((await listPage(other, URL)).meta, { total: 0, has_more: false });
  t.equal((await listPage(other, URL, { referral_id: stored[0].referral_id })).data.length, 0);
});

t.test('contract version 1 names received_at created_at and has no missing_information', async (t) => {
  const v1 = { 'svc-contract-version': '1' };
  const page = (await phi.request({ method: 'GET', url: URL, headers: v1 })).json();
  t.equal(page.data[0].created_at, stored[0].received_at.toISOString());
  t.notOk('received_at' in page.data[0]);
  t.notOk('missing_information' in page.data[0]);
  const detail = (await get(phi, stored[0].id, v1)).json().data;
  t.equal(detail.created_at, stored[0].received_at.toISOString());
});
