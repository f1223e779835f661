import t, { type Test } from 'tap';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { buildTestApp, type Response, type SignedInApi } from '../helpers/app.js';
import { seededAgency } from '../helpers/clinical.js';
import { testDatabase } from '../helpers/database.js';
import { bearer, issueTestToken } from '../helpers/identity.js';

/**
 * Text a phi session writes through the partition must never reach a no_phi session of the same agency: every
 * free-text and pass-through field gets a distinct canary, then every route is read (and made to fail) in no_phi,
 * and no canary may appear in any body, header or log line.
 */
const logLines: string[] = [];
const logger = pino(
  { level: 'trace' },
  new Writable({ write: (chunk, _encoding, done) => done(void logLines.push(String(chunk))) }),
);
const { db } = await testDatabase();
const api = await buildTestApp({}, t, logger);
const { agencyId, phi, noPhi } = await seededAgency(api);

const canary = (field: string) => `canary~${field}`;
const CANARY = 'canary~';
/** A planted day, time and coordinate: no_phi sees dates as January 1 of their year and no coordinates. */
const PLANTED_PRECISION = ['-07-23', '13:37:11', '12.3456789', '98.7654321'];
const year = new Date().getUTCFullYear();
/** Birthdays late in the year: an age computed to the day would differ from one computed from the year. */
const patientDob = `${year - 50}-12-31`;
const holderDob = `${year - 90}-12-31`;

const key = () => `canary-${Math.random().toString(36).slice(2, 14)}`;
const first = async (table: 'physicians' | 'payors' | 'referral_sources' | 'hospitals' | 'documents') =>
  (await db.selectFrom(table).select('id').where('agency_id', '=', agencyId).orderBy('id').executeTakeFirstOrThrow())
    .id;
const zip = (
  await db
    .selectFrom('agency_service_zips')
    .select('zip_code')
    .where('agency_id', '=', agencyId)
    .orderBy('zip_code')
    .executeTakeFirstOrThrow()
).zip_code;
const marketerId = (
  await db
    .selectFrom('agency_users')
    .select('id')
    .where('agency_id', '=', agencyId)
    .where('role', '=', 'marketer')
    .executeTakeFirstOrThrow()
).id;

async function command(
  session: SignedInApi,
  method: 'POST' | 'PATCH',
  url: string,
  payload: object,
): Promise<Response> {
  return session.request({ method, url, headers: { 'idempotency-key': key() }, payload });
}

async function created(session: SignedInApi, url: string, payload: object) {
  const res = await command(session, 'POST', url, payload);
  if (res.statusCode !== 200) throw new Error(`POST ${url} -> ${res.statusCode}: ${res.body}`);
  return res.json().data;
}

const fullReferral = {
  service_line: 'home_health',
  patient_first_name: canary('patient_first_name'),
  patient_middle_name: canary('patient_middle_name'),
  patient_last_name: canary('patient_last_name'),
  patient_suffix: canary('patient_suffix'),
  patient_dob: patientDob,
  patient_phone: canary('patient_phone'),
  patient_alt_phone: canary('patient_alt_phone'),
  patient_preferred_phone: 'primary',
  patient_address: `${canary('line1')}, ${canary('line2')}, ${canary('city')}, OH ${zip}`,
  patient_coordinates: { latitude: 12.3456789, longitude: -98.7654321 },
  referral_type: canary('referral_type'),
  referral_date: '2026-07-23T13:37:11.000Z',
  referral_source: canary('referral_source'),
  referral_source_id: await first('referral_sources'),
  referring_facility: canary('referring_facility'),
  referring_physician: canary('referring_physician'),
  referring_physician_id: await first('physicians'),
  hospital_id: await first('hospitals'),
  marketer_id: marketerId,
  marketer_label: canary('marketer_label'),
  insurance: {
    payor_id: await first('payors'),
    policy_number: canary('policy_number'),
    group_number: canary('group_number'),
    effective_date: '2020-07-23',
    termination_date: '2030-07-23',
    coverage_order: 0,
    other_insurance_name: canary('other_insurance_name'),
    relationship_to_insured: 'spouse',
    insured_first_name: canary('insured_first_name'),
    insured_last_name: canary('insured_last_name'),
    insured_middle_name: canary('insured_middle_name'),
    insured_suffix: canary('insured_suffix'),
    insured_dob: holderDob,
    insured_gender: 'female',
    insured_address_line_1: canary('insured_line1'),
    insured_address_line_2: canary('insured_line2'),
    insured_city: canary('insured_city'),
    insured_state: 'OH',
    insured_zip_code: `${zip}-0723`,
    insurance_extra: canary('insurance_additional_property'),
  },
  insurance_name: canary('insurance_name'),
  insurance_notes: canary('insurance_notes'),
  diagnoses: [{ code: 'I50.9', description: canary('diagnosis_description') }],
  document_ids: [await first('documents')],
  notes: canary('notes'),
  custom_data: { [canary('custom_key')]: canary('custom_value') },
  source_system: canary('source_system'),
  external_reference_id: canary('external_reference_id'),
  [canary('additional_property')]: canary('additional_value'),
};
const full = await created(phi, '/api/v1/ext/referrals', fullReferral);
// The thin 2026-04-01 shape, and a service line nobody offers: declined, stored as sent.
const thin = await created(phi, '/api/v1/ext/referrals', {
  service_line: 'hospice',
  patient_name: `${canary('thin_first')} ${canary('thin_last')}`,
  zip_code: zip,
  referral_type: canary('thin_referral_type'),
  referral_source: canary('thin_referral_source'),
  marketer_id: marketerId,
  marketer_label: canary('thin_marketer_label'),
});
const oddLine = await created(phi, '/api/v1/ext/referrals', {
  service_line: canary('service_line'),
  patient_first_name: canary('odd_first'),
  patient_last_name: canary('odd_last'),
  patient_zip_code: zip,
  insurance: canary('insurance_plan_string'),
});
const referralIds = [full.referral_id, thin.referral_id, oddLine.referral_id];
const intakeIds = [full.intake_id, thin.intake_id, oddLine.intake_id];
const chartId: string = full.patient_id;

const task = await created(phi, '/api/v1/ext/tasks', {
  title: canary('task_title'),
  description: canary('task_description'),
  due_date: '2031-07-23',
  related_resource: { type: 'patient', id: chartId },
});
await command(phi, 'PATCH', `/api/v1/ext/tasks/${task.id}`, {
  title: canary('patched_title'),
  description: canary('patched_description'),
  due_date: '2032-07-23',
});

// Visits cannot be written through the partition: a missed and a cancelled one with free text are stored directly, for the read side.
const visit = (status: 'missed' | 'cancelled') => ({
  agency_id: agencyId,
  id: `visit_canary_${status}`,
  patient_id: chartId,
  episode_id: null,
  discipline: 'SN' as const,
  visit_type: 'routine' as const,
  status,
  scheduled_start: new Date('2026-07-23T13:37:11Z'),
  scheduled_end: new Date('2026-07-23T14:37:11Z'),
  actual_start: null,
  actual_end: null,
  clinician_id: null,
  office_id: null,
  service_code: 'G0299',
  duration_minutes: null,
  evv_status: 'not_required' as const,
  documentation_status: 'not_started' as const,
  missed_reason: status === 'missed' ? canary('missed_reason') : null,
  cancellation_reason: status === 'cancelled' ? canary('cancellation_reason') : null,
});
await db
  .insertInto('visits')
  .values([visit('missed'), visit('cancelled')])
  .execute();

/** The chart's handle, as a no_phi session learns it. */
const handle: string = (await noPhi.request({ method: 'GET', url: `/api/v1/ext/referrals/${full.referral_id}` })).json()
  .data.patient_id;

type Read = { method?: 'GET' | 'PATCH' | 'POST'; url: string; query?: Record<string, string>; payload?: object };

/** Reads each request in the no_phi session, in both contract versions for GETs. */
async function readAll(reads: Read[]): Promise<Response[]> {
  const responses: Response[] = [];
  for (const { method = 'GET', url, query, payload } of reads) {
    const versions = method === 'GET' ? ['2', '1'] : ['2'];
    for (const version of versions) {
      const headers = { 'svc-contract-version': version, ...(method === 'GET' ? {} : { 'idempotency-key': key() }) };
      responses.push(await noPhi.request({ method, url, query, payload, headers }));
    }
  }
  return responses;
}

/** Every canary and planted precision that reached a response or the log. */
function leaks(responses: Response[]): string[] {
  const found: string[] = [];
  for (const res of responses) {
    const text = `${res.statusCode} ${res.body} ${JSON.stringify(res.headers)}`;
    if (text.includes(CANARY))
      found.push(`${res.statusCode}: ${text.slice(Math.max(0, text.indexOf(CANARY) - 80), text.indexOf(CANARY) + 60)}`);
    for (const planted of PLANTED_PRECISION)
      if (res.body.includes(planted)) found.push(`${res.statusCode}: ${planted}`);
  }
  for (const line of logLines) if (line.includes(CANARY)) found.push(`log: ${line.slice(0, 300)}`);
  return found;
}

function assertNoLeak(t: Test, responses: Response[], answered: number[]) {
  t.same(
    responses.map((r) => r.statusCode).filter((s) => !answered.includes(s)),
    [],
    'every read answered as expected',
  );
  t.same(leaks(responses), [], 'no canary in any body, header or log line');
}

t.test('patients: list and chart', async (t) => {
  const responses = await readAll([
    { url: '/api/v1/ext/patients', query: { limit: '200' } },
    { url: '/api/v1/ext/patients', query: { limit: '200', offset: '200' } },
    { url: `/api/v1/ext/patients/${handle}` },
    { url: '/api/v1/ext/patients/PT-0000000000' },
    { url: '/api/v1/ext/patients', query: { updated_since: 'yesterday' } },
  ]);
  assertNoLeak(t, responses, [200, 400, 404]);
  const chart = responses[4].json().data;
  t.match(
    chart,
    { id: handle, age: String(50), birth_year: null, dob: null },
    'age from the birth year alone, so it does not change on the birthday',
  );
});

t.test('referrals: list and detail, both request shapes', async (t) => {
  const responses = await readAll([
    { url: '/api/v1/ext/referrals', query: { limit: '200' } },
    { url: '/api/v1/ext/referrals', query: { limit: '200', offset: '200' } },
    ...referralIds.map((id) => ({ url: `/api/v1/ext/referrals/${id}` })),
    { url: '/api/v1/ext/referrals/ref_unknown' },
    { url: '/api/v1/ext/referrals', query: { referral_date_from: '2026-07-23' } },
    { url: '/api/v1/ext/referrals', query: { patient_id: chartId } },
  ]);
  assertNoLeak(t, responses, [200, 400, 404]);
  t.match(responses[4].json().data, {
    referral_type: 'other',
    referral_type_category: 'other',
    service_line: 'home_health',
    additional_fields: {},
  });
  t.match(
    responses[8].json().data,
    { service_line: 'other' },
    'a service line stored as sent is reduced to its category',
  );
});

t.test('intakes: list and detail, with coverage, holder and diagnoses', async (t) => {
  const responses = await readAll([
    { url: '/api/v1/ext/intakes', query: { limit: '200' } },
    { url: '/api/v1/ext/intakes', query: { limit: '200', offset: '200' } },
    ...intakeIds.map((id) => ({ url: `/api/v1/ext/intakes/${id}` })),
    { url: '/api/v1/ext/intakes/int_unknown' },
    { url: '/api/v1/ext/intakes', query: { patient_id: chartId } },
  ]);
  assertNoLeak(t, responses, [200, 404]);
  const intake = responses[4].json().data;
  t.match(intake.diagnoses, [{ code: 'I50.9', is_primary: true }], 'codes are kept');
  t.equal(intake.insurance[0].policy_holder.dob, null, 'a holder whose birth year is 90 years ago has no birth year');
  const code = await command(phi, 'POST', '/api/v1/ext/referrals', {
    ...fullReferral,
    diagnoses: [{ code: canary('diagnosis_code') }],
  });
  t.equal(code.statusCode, 400, 'a diagnosis code must look like an ICD-10-CM code, so it cannot carry text');
});

t.test('visits: list and detail', async (t) => {
  const responses = await readAll([
    { url: '/api/v1/ext/visits', query: { patient_id: handle } },
    { url: '/api/v1/ext/visits/visit_canary_missed' },
    { url: '/api/v1/ext/visits/visit_canary_cancelled' },
    { url: '/api/v1/ext/visits/visit_unknown' },
    { url: '/api/v1/ext/visits', query: { scheduled_from: '2026-07-23T13:37:11Z' } },
  ]);
  assertNoLeak(t, responses, [200, 400, 404]);
  t.equal(responses[0].json().data.length, 2);
});

t.test('tasks: read, update and create in no_phi', async (t) => {
  const responses = await readAll([
    { url: `/api/v1/ext/tasks/${task.id}` },
    { method: 'PATCH', url: `/api/v1/ext/tasks/${task.id}`, payload: { status: 'in_progress' } },
    { method: 'PATCH', url: `/api/v1/ext/tasks/${task.id}`, payload: { priority: 'high', version: 1 } },
    {
      method: 'POST',
      url: '/api/v1/ext/tasks',
      payload: {
        title: canary('own_title'),
        description: canary('own_description'),
        related_resource: { type: 'patient', id: handle },
      },
    },
    { url: '/api/v1/ext/tasks/task_unknown' },
  ]);
  assertNoLeak(t, responses, [200, 404, 409]);
  t.match(responses[0].json().data, {
    title: '',
    description: null,
    due_date: '2032-01-01',
    related_resource: { type: 'patient', id: handle },
  });
  const collection = await command(phi, 'POST', '/api/v1/ext/tasks', {
    title: 'x',
    related_resource: { type: 'patient', id: chartId, collection_id: canary('collection_id') },
  });
  t.equal(
    collection.statusCode,
    400,
    'collection_id belongs to a working collection row only, so it is not stored as sent',
  );
});

t.test(
  'tasks: a key used in a phi session conflicts in no_phi of the same integration, so a phi answer is never replayed there',
  async (t) => {
    const headers = { 'idempotency-key': key() };
    const payload = { title: canary('keyed_title') };
    const first = await phi.request({ method: 'POST', url: '/api/v1/ext/tasks', headers, payload });
    t.equal(first.statusCode, 200);
    const noPhiToken = await issueTestToken(api, phi.integration, 'no_phi');
    const replay = await api.request({
      method: 'POST',
      url: '/api/v1/ext/tasks',
      headers: { ...headers, ...bearer(noPhiToken) },
      payload,
    });
    t.equal(replay.statusCode, 409);
    t.match(replay.json().error, { code: 'PLATFORM_IDEMPOTENCY_CONFLICT' });
    assertNoLeak(t, [replay], [409]);
  },
);
