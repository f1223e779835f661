import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { sql } from 'kysely';
import { buildTestApp, signIn, type Response, type SignedInApi } from '../../helpers/app.js';
import { seededAgency } from '../../helpers/clinical.js';
import { testDatabase } from '../../helpers/database.js';

const { db } = await testDatabase();
const api = await buildTestApp();
const { agencyId, phi, noPhi } = await seededAgency(api);
const otherAgency = await signIn(api);

type Body = Record<string, unknown>;

const key = () => `ref-${Math.random().toString(36).slice(2, 14)}`;
const post = (session: SignedInApi, payload: Body, headers: Record<string, string> = {}) =>
  session.request({
    method: 'POST',
    url: '/api/v1/ext/referrals',
    headers: { 'idempotency-key': key(), ...headers },
    payload,
  });
/** A name nobody else in the agency has, so identity matches stay within one test. */
const uniqueLast = () => `Testperson${Math.random().toString(36).slice(2, 8)}`;

// Reference data of the seeded agency, read from the database rather than assumed.
const serviceZips = await db
  .selectFrom('agency_service_zips')
  .select(['zip_code', 'office_id'])
  .where('agency_id', '=', agencyId)
  .orderBy('zip_code')
  .execute();
const inArea = serviceZips[0];
const inAreaZips = new Set(serviceZips.map((z) => z.zip_code));
const outOfAreaZip = ['99950', '99929', '96799', '00601'].find((zip) => !inAreaZips.has(zip))!;
const firstId = async (table: 'physicians' | 'payors' | 'referral_sources' | 'hospitals' | 'documents') =>
  (await db.selectFrom(table).select('id').where('agency_id', '=', agencyId).orderBy('id').executeTakeFirstOrThrow())
    .id;
const physicianId = await firstId('physicians');
const payorIds = (
  await db.selectFrom('payors').select('id').where('agency_id', '=', agencyId).orderBy('id').limit(2).execute()
).map((p) => p.id);
const sourceId = await firstId('referral_sources');
const hospitalId = await firstId('hospitals');
const documentIds = (
  await db.selectFrom('documents').select('id').where('agency_id', '=', agencyId).orderBy('id').limit(2).execute()
).map((d) => d.id);
const marketerId = (
  await db
    .selectFrom('agency_users')
    .select('id')
    .where('agency_id', '=', agencyId)
    .where('role', '=', 'marketer')
    .executeTakeFirstOrThrow()
).id;

const activeEpisode = sql<boolean>`exists (select 1 from episodes e where e.agency_id = patients.agency_id and e.patient_id = patients.id and e.status = 'active')`;
// Seeded ids are keyed by the agency, so which chart sorts first changes from run to run: ask for what a test uses.
const midEpisodePatient = await db
  .selectFrom('patients')
  .selectAll()
  .where('agency_id', '=', agencyId)
  .where(activeEpisode)
  .where('dob', 'is not', null)
  .where('primary_phone', 'is not', null)
  .orderBy('id')
  .executeTakeFirstOrThrow();
const idlePatient = await db
  .selectFrom('patients')
  .selectAll()
  .where('agency_id', '=', agencyId)
  .where(sql<boolean>`not ${activeEpisode}`)
  .where('dob', 'is not', null)
  .where('primary_phone', 'is not', null)
  .orderBy('id')
  .executeTakeFirstOrThrow();

const counts = async (agency = agencyId) => {
  const count = (table: 'referrals' | 'intakes' | 'patients' | 'referral_documents') =>
    db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('agency_id', '=', agency)
      .executeTakeFirstOrThrow()
      .then((r) => Number(r.n));
  return {
    referrals: await count('referrals'),
    intakes: await count('intakes'),
    patients: await count('patients'),
    links: await count('referral_documents'),
  };
};
const storedReferral = (id: string) =>
  db
    .selectFrom('referrals')
    .selectAll()
    .where('agency_id', '=', agencyId)
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
const storedIntake = (id: string) =>
  db.selectFrom('intakes').selectAll().where('agency_id', '=', agencyId).where('id', '=', id).executeTakeFirstOrThrow();
const storedPatient = (id: string) =>
  db
    .selectFrom('patients')
    .selectAll()
    .where('agency_id', '=', agencyId)
    .where('id', '=', id)
    .executeTakeFirstOrThrow();

/** The audit record of a request; a refused command's record is written after the response, so this waits for it. */
async function auditOf(res: Response) {
  const find = () =>
    db
      .selectFrom('audit_events')
      .selectAll()
      .where('agency_id', '=', agencyId)
      .where('request_id', '=', String(res.headers['x-request-id']))
      .executeTakeFirst();
  const deadline = Date.now() + 3_000;
  let row = await find();
  while (!row && Date.now() < deadline) row = await sleep(20).then(find);
  return row;
}

function invalidInput(t: Test, res: Response, field: string) {
  t.equal(res.statusCode, 400, res.body);
  t.match(res.json().error, { code: 'PLATFORM_INVALID_INPUT', category: 'validation', details: { field } });
}

const currentPacket = (last = uniqueLast()): Body => ({
  service_line: 'home_health',
  patient_first_name: 'Zoë',
  patient_middle_name: 'Anne',
  patient_last_name: last,
  patient_dob: '1941-05-17',
  patient_phone: '(614) 555-0142',
  patient_alt_phone: '614-555-0199',
  patient_preferred_phone: 'alternate',
  patient_address: `12 Elm St, Apt 3, Springfield, oh ${inArea.zip_code}`,
  patient_coordinates: { latitude: 39.961176, longitude: -82.998794 },
  referral_type: 'soc',
  referral_date: '2026-11-20T14:30:00.000Z',
  referral_source: 'Riverside Methodist',
  referral_source_id: sourceId,
  referring_facility: 'Riverside Methodist Hospital',
  referring_physician_id: physicianId,
  signing_physician_id: physicianId,
  certifying_physician_id: physicianId,
  payor_id: payorIds[0],
  hospital_id: hospitalId,
  marketer_id: marketerId,
  insurance: { policy_number: ' 1EG4TE5MK72 ', effective_date: '2006-05-01', coverage_order: 0 },
  insurance_name: 'Medicare Part A',
  insurance_notes: 'Verify eligibility.',
  diagnoses: [{ code: 'I50.9', description: 'Heart failure, unspecified' }, { code: 'E11.9' }],
  document_ids: documentIds,
  notes: 'Lives alone.',
  custom_data: { fall_risk: true, preferred_language: 'Spanish', visits_per_week: 3, hospice_election: null },
  source_system: 'hospital_ehr_hub',
  external_reference_id: 'EHR-2026-000123',
  preferred_pharmacy: 'Main Street Pharmacy',
});

t.test('a full 2026-08-19 packet opens a chart, records referral and intake, and echoes the decision', async (t) => {
  const before = await counts();
  const res = await post(phi, currentPacket('Muñoz-Test'));
  t.equal(res.statusCode, 200, res.body);
  const data = res.json().data;
  t.match(data, {
    referral_id: /^ref_/,
    intake_id: /^int_/,
    patient_id: /^pat_/,
    patient_created: true,
    patient_matched: false,
    disposition: 'accepted',
    decline_reason: null,
    decline_detail: null,
    office_id: inArea.office_id,
    request_shape: '2026-08-19',
    missing_information: [],
  });
  t.notOk(res.headers.deprecation, 'the current shape is not deprecated');
  t.notOk(res.json().meta?.deprecations);
  t.same(await counts(), {
    ...before,
    referrals: before.referrals + 1,
    intakes: before.intakes + 1,
    patients: before.patients + 1,
    links: before.links + 2,
  });

  const referral = await storedReferral(data.referral_id);
  t.match(referral, {
    intake_id: data.intake_id,
    patient_id: data.patient_id,
    patient_display_name: 'Zoë Anne Muñoz-Test',
    service_line: 'home_health',
    referral_type: 'soc',
    referral_type_category: 'soc',
    referral_source_id: sourceId,
    referring_physician_id: physicianId,
    payor_id: payorIds[0],
    hospital_id: hospitalId,
    marketer_id: marketerId,
    zip_code: inArea.zip_code,
    office_id: inArea.office_id,
    disposition: 'accepted',
    request_shape: '2026-08-19',
    source_system: 'hospital_ehr_hub',
    external_reference_id: 'EHR-2026-000123',
  });
  t.equal(referral.referral_date.toISOString(), '2026-11-20T14:30:00.000Z');
  t.same(referral.additional_fields, { preferred_pharmacy: 'Main Street Pharmacy' }, 'additional properties are kept');

  const intake = await storedIntake(data.intake_id);
  t.match(intake, {
    referral_id: data.referral_id,
    status: 'pending_review',
    reviewer_id: null,
    missing_information: [],
    insurance_notes: 'Verify eligibility.',
    notes: 'Lives alone.',
  });
  t.same(intake.custom_data, {
    fall_risk: true,
    preferred_language: 'Spanish',
    visits_per_week: 3,
    hospice_election: null,
  });
  t.same(intake.diagnoses, [
    { code: 'I50.9', description: 'Heart failure, unspecified', is_primary: true },
    { code: 'E11.9', is_primary: false },
  ]);
  t.match(intake.insurance, [
    {
      payor_id: payorIds[0],
      plan_name: 'Medicare Part A',
      policy_number: '1EG4TE5MK72',
      effective_date: '2006-05-01',
      coverage_order: 0,
      policy_holder: null,
      policy_holder_confirmed: false,
    },
  ]);

  const chart = await storedPatient(data.patient_id);
  t.match(chart, {
    first_name: 'Zoë',
    middle_name: 'Anne',
    last_name: 'Muñoz-Test',
    dob: '1941-05-17',
    primary_phone: '(614) 555-0142',
    alt_phone: '614-555-0199',
    preferred_phone: 'alternate',
    address_line_1: '12 Elm St',
    address_line_2: 'Apt 3',
    city: 'Springfield',
    state: 'OH',
    zip_code: inArea.zip_code,
    latitude: '39.961176',
    longitude: '-82.998794',
    office_id: inArea.office_id,
    service_line: 'home_health',
    status: 'referred',
    match_first_name: 'zoe',
    match_last_name: 'munoz-test',
    match_phone: '6145550142',
  });
  const coverages = await db
    .selectFrom('coverages')
    .select('id')
    .where('agency_id', '=', agencyId)
    .where('patient_id', '=', data.patient_id)
    .execute();
  t.same(coverages, [], 'coverage stays pending on the intake until a reviewer confirms it');
  const links = await db
    .selectFrom('referral_documents')
    .select(['document_id', 'position'])
    .where('agency_id', '=', agencyId)
    .where('referral_id', '=', data.referral_id)
    .orderBy('position')
    .execute();
  t.same(
    links,
    documentIds.map((document_id, position) => ({ document_id, position })),
  );

  const audit = await auditOf(res);
  t.match(audit, {
    operation_id: 'createReferral',
    resource_type: 'referral',
    outcome: 'success',
    source_system: 'hospital_ehr_hub',
    external_reference_id: 'EHR-2026-000123',
  });
  t.same(audit?.resource_ids, [data.referral_id, data.intake_id, data.patient_id]);
});

t.test('the thin 2026-04-01 shape is accepted with deprecation signals for the shape and zip_code', async (t) => {
  const last = uniqueLast();
  const res = await post(phi, {
    service_line: 'hospice',
    patient_name: `Walter ${last}`,
    zip_code: inArea.zip_code,
    referral_type: 'transfer',
    referral_source: 'Daughter called in',
  });
  t.equal(res.statusCode, 200, res.body);
  t.match(res.json().data, {
    request_shape: '2026-04-01',
    disposition: 'accepted',
    patient_created: true,
    office_id: inArea.office_id,
  });
  t.equal(res.headers.deprecation, `@${Date.parse('2026-08-19') / 1000}`);
  t.match(res.json().meta.deprecations, [
    { kind: 'request_shape', name: '2026-04-01', successor: '2026-08-19', sunset: null },
    { kind: 'field', name: 'zip_code', successor: 'patient_zip_code', since: '2026-08-19' },
  ]);
  const referral = await storedReferral(res.json().data.referral_id);
  t.match(referral, {
    request_shape: '2026-04-01',
    zip_code: inArea.zip_code,
    referral_type: 'transfer',
    referral_type_category: 'other',
    patient_display_name: `Walter ${last}`,
  });
  t.match(await storedPatient(res.json().data.patient_id), {
    first_name: 'Walter',
    last_name: last,
    middle_name: null,
    service_line: 'hospice',
  });
});

t.test('ZIP rule: patient_zip_code, else the deprecated zip_code, else the end of patient_address', async (t) => {
  const base = {
    service_line: 'home_health',
    patient_first_name: 'Ida',
    patient_last_name: uniqueLast(),
    patient_dob: '1950-01-01',
  };
  const both = await post(phi, { ...base, patient_zip_code: inArea.zip_code, zip_code: outOfAreaZip });
  t.match(both.json().data, { disposition: 'accepted', office_id: inArea.office_id, request_shape: '2026-08-19' });
  t.match(
    both.json().meta.deprecations,
    [{ kind: 'field', name: 'zip_code', successor: 'patient_zip_code' }],
    'zip_code sent in a current-shape body still signals',
  );
  t.equal(both.json().meta.deprecations.length, 1);
  t.ok(both.headers.deprecation);

  const fromAddress = await post(phi, {
    ...base,
    patient_address: `400 Oak Ave Springfield OH ${inArea.zip_code}-1234`,
  });
  t.match(fromAddress.json().data, { disposition: 'accepted', office_id: inArea.office_id });
  t.equal((await storedReferral(fromAddress.json().data.referral_id)).zip_code, `${inArea.zip_code}-1234`);
  t.notOk(fromAddress.headers.deprecation);

  const none = await post(phi, { ...base, patient_address: 'Farm road, no number' });
  t.match(none.json().data, { disposition: 'accepted', office_id: null, missing_information: ['patient_zip_code'] });
  t.match(await storedPatient(none.json().data.patient_id), {
    address_line_1: 'Farm road, no number',
    zip_code: null,
    office_id: null,
  });

  invalidInput(t, await post(phi, { ...base, patient_zip_code: '4321' }), 'patient_zip_code');
  invalidInput(t, await post(phi, { ...base, zip_code: 'ABCDE' }), 'zip_code');
});

t.test('name rule: patient_name, or first with last name; neither is a 400 naming both options', async (t) => {
  const neither = await post(phi, {
    service_line: 'home_health',
    patient_first_name: 'Ada',
    patient_zip_code: inArea.zip_code,
  });
  invalidInput(t, neither, 'patient_name');
  t.match(neither.json().error.message, /patient_name.*patient_first_name.*patient_last_name/);
  invalidInput(t, await post(phi, { service_line: 'home_health', patient_name: '   ' }), 'patient_name');
  invalidInput(t, await post(phi, { service_line: 'home_health', patient_name: 'Cher' }), 'patient_name');

  const last = uniqueLast();
  const commaForm = await post(phi, {
    service_line: 'home_health',
    patient_name: `${last} Jr., Robert  Lee`,
    patient_zip_code: inArea.zip_code,
  });
  t.match(await storedPatient(commaForm.json().data.patient_id), {
    first_name: 'Robert',
    middle_name: 'Lee',
    last_name: last,
    suffix: 'Jr.',
  });
  const parts = await post(phi, {
    service_line: 'home_health',
    patient_name: 'ignored for the chart',
    patient_first_name: 'Rosa',
    patient_last_name: last,
    patient_suffix: 'III',
  });
  t.match(await storedPatient(parts.json().data.patient_id), { first_name: 'Rosa', last_name: last, suffix: 'III' });
  t.equal(
    (await storedReferral(parts.json().data.referral_id)).patient_display_name,
    'ignored for the chart',
    'the display name is kept as sent',
  );
});

t.test('an out-of-area lead is declined with 2xx and still recorded, without opening a chart', async (t) => {
  const before = await counts();
  const res = await post(phi, { ...currentPacket(), patient_address: undefined, patient_zip_code: outOfAreaZip });
  t.equal(res.statusCode, 200, res.body);
  const data = res.json().data;
  t.match(data, {
    disposition: 'declined',
    decline_reason: 'out_of_area',
    decline_detail: new RegExp(`ZIP ${outOfAreaZip}`),
    office_id: null,
    patient_id: null,
    patient_created: false,
    missing_information: [],
  });
  t.same(await counts(), {
    ...before,
    referrals: before.referrals + 1,
    intakes: before.intakes + 1,
    links: before.links + 2,
  });
  t.match(await storedReferral(data.referral_id), {
    disposition: 'declined',
    decline_reason: 'out_of_area',
    zip_code: outOfAreaZip,
    patient_id: null,
  });
  t.match(await storedIntake(data.intake_id), { status: 'declined' });
});

t.test('a service line the agency does not offer is declined service_line_not_offered and recorded', async (t) => {
  const res = await post(phi, {
    service_line: 'dme_supply',
    patient_name: `Hal ${uniqueLast()}`,
    patient_zip_code: inArea.zip_code,
  });
  t.equal(res.statusCode, 200, res.body);
  t.match(res.json().data, {
    disposition: 'declined',
    decline_reason: 'service_line_not_offered',
    decline_detail: /dme_supply/,
    patient_created: false,
    patient_id: null,
    office_id: inArea.office_id,
  });
  t.match(await storedReferral(res.json().data.referral_id), { service_line: 'dme_supply', disposition: 'declined' });
});

t.test(
  'identity rule: normalized name, dob and phone match an existing chart; without dob or phone a chart is opened',
  async (t) => {
    const sameIdentity = await db
      .selectFrom('patients')
      .select('id')
      .where('agency_id', '=', agencyId)
      .where('match_last_name', '=', idlePatient.match_last_name)
      .where('match_first_name', '=', idlePatient.match_first_name)
      .where('dob', '=', idlePatient.dob)
      .where('match_phone', '=', idlePatient.match_phone)
      .execute();
    t.equal(sameIdentity.length, 1, 'the chart is the only one with its identity');
    const digits = idlePatient.match_phone!;
    const shouted = {
      service_line: idlePatient.service_line,
      patient_first_name: `  ${idlePatient.first_name.toUpperCase()} `,
      patient_last_name: idlePatient.last_name.toLowerCase(),
      patient_dob: idlePatient.dob,
      patient_phone: `+1 (${digits.slice(0, 3)}) ${digits.slice(3, 6)}.${digits.slice(6)}`,
      patient_zip_code: inArea.zip_code,
    };
    const before = await counts();
    const matched = await post(phi, shouted);
    t.match(matched.json().data, {
      patient_id: idlePatient.id,
      patient_matched: true,
      patient_created: false,
      disposition: 'accepted',
    });
    t.equal((await counts()).patients, before.patients, 'no chart opened');

    const otherDob = await post(phi, { ...shouted, patient_dob: '1901-01-01' });
    t.match(otherDob.json().data, { patient_matched: false, patient_created: true });
    const noPhone = await post(phi, { ...shouted, patient_phone: undefined });
    t.match(noPhone.json().data, { patient_matched: false, patient_created: true }, 'a match needs the phone');
  },
);

t.test('patient_id links to a chart of the agency; an unknown one is a 400', async (t) => {
  const linked = await post(phi, {
    service_line: 'home_health',
    patient_id: idlePatient.id,
    patient_name: 'Someone Else',
    patient_zip_code: inArea.zip_code,
    referral_type: 'ROC',
  });
  t.match(linked.json().data, {
    patient_id: idlePatient.id,
    patient_matched: false,
    patient_created: false,
    disposition: 'accepted',
  });
  t.match(await storedReferral(linked.json().data.referral_id), {
    patient_id: idlePatient.id,
    referral_type: 'ROC',
    referral_type_category: 'roc',
  });
  invalidInput(
    t,
    await post(phi, { service_line: 'home_health', patient_id: 'pat_doesnotexist', patient_name: 'Some One' }),
    'patient_id',
  );
});

t.test(
  'a patient mid-episode needs existing_patient_episode_reviewed: 409 PLATFORM_CONFLICT otherwise, with nothing written',
  async (t) => {
    const body: Body = {
      service_line: midEpisodePatient.service_line,
      patient_id: midEpisodePatient.id,
      patient_name: 'Any Name',
      patient_zip_code: inArea.zip_code,
      referral_type: 'roc',
    };
    const before = await counts();
    const idempotencyKey = key();
    const refused = await post(phi, body, { 'idempotency-key': idempotencyKey });
    t.equal(refused.statusCode, 409, refused.body);
    const episode = await db
      .selectFrom('episodes')
      .selectAll()
      .where('agency_id', '=', agencyId)
      .where('patient_id', '=', midEpisodePatient.id)
      .where('status', '=', 'active')
      .executeTakeFirstOrThrow();
    t.match(refused.json().error, {
      code: 'PLATFORM_CONFLICT',
      category: 'conflict',
      retryable: false,
      details: {
        reason: 'existing_patient_episode_review_required',
        field: 'existing_patient_episode_reviewed',
        patient_id: midEpisodePatient.id,
        episode_id: episode.id,
        next_step: /existing_patient_episode_reviewed: true/,
      },
    });
    t.same(await counts(), before);
    const reviewed = await post(
      phi,
      { ...body, existing_patient_episode_reviewed: true },
      { 'idempotency-key': idempotencyKey },
    );
    t.equal(reviewed.statusCode, 200, 'the refused key is free for the corrected request');
    t.match(reviewed.json().data, { patient_id: midEpisodePatient.id, disposition: 'accepted' });
    t.equal((await post(phi, { ...body, existing_patient_episode_reviewed: false })).statusCode, 409);
  },
);

t.test(
  'the review also guards an identity match onto a mid-episode chart, but never refuses a declined lead',
  async (t) => {
    const identity = {
      service_line: midEpisodePatient.service_line,
      patient_first_name: midEpisodePatient.first_name,
      patient_last_name: midEpisodePatient.last_name,
      patient_dob: midEpisodePatient.dob,
      patient_phone: midEpisodePatient.primary_phone,
    };
    t.ok(identity.patient_dob && identity.patient_phone, 'the mid-episode chart has dob and phone');
    const matched = await post(phi, { ...identity, patient_zip_code: inArea.zip_code });
    t.equal(matched.statusCode, 409);
    t.equal(matched.json().error.details.patient_id, midEpisodePatient.id);
    const declined = await post(phi, { ...identity, patient_zip_code: outOfAreaZip });
    t.equal(declined.statusCode, 200);
    t.match(declined.json().data, {
      disposition: 'declined',
      patient_id: midEpisodePatient.id,
      patient_matched: true,
      patient_created: false,
    });
  },
);

t.test('referral_type: soc and roc in any case; anything else stored as sent and read as other', async (t) => {
  for (const [sent, category] of [
    ['soc', 'soc'],
    ['Roc', 'roc'],
    ['evaluation_only', 'other'],
    [undefined, 'other'],
  ] as const) {
    const res = await post(phi, {
      service_line: 'home_health',
      patient_name: `Tess ${uniqueLast()}`,
      patient_zip_code: inArea.zip_code,
      referral_type: sent,
    });
    t.match(await storedReferral(res.json().data.referral_id), {
      referral_type: sent ?? null,
      referral_type_category: category,
    });
  }
});

t.test('a misspelt field is stored as sent, and the warnings name it and the field it probably meant', async (t) => {
  const res = await post(phi, {
    service_line: 'home_health',
    patient_name: `Kit ${uniqueLast()}`,
    patient_zipcode: inArea.zip_code,
    referal_source: 'St. Elsewhere',
    crm_id: 'C-77',
  });
  t.equal(res.statusCode, 200, res.body);
  t.same(res.json().warnings, [
    'Unknown field "patient_zipcode" was stored as sent but not read as any field; did you mean "patient_zip_code"? The field meant counts as missing.',
    'Unknown field "referal_source" was stored as sent but not read as any field; did you mean "referral_source"? The field meant counts as missing.',
  ]);
  const referral = await storedReferral(res.json().data.referral_id);
  t.same(
    referral.additional_fields,
    { patient_zipcode: inArea.zip_code, referal_source: 'St. Elsewhere', crm_id: 'C-77' },
    'all three kept as sent',
  );
  t.equal(referral.zip_code, null, 'the ZIP it meant was not read');
  const clean = await post(phi, {
    service_line: 'home_health',
    patient_name: `Kit ${uniqueLast()}`,
    patient_zip_code: inArea.zip_code,
  });
  t.notOk('warnings' in clean.json(), 'no warnings without a near miss');
});

t.test('insurance: a bare string is the plan name; payor_id alone is the primary payor', async (t) => {
  const base = { service_line: 'home_health', patient_name: `Ivy ${uniqueLast()}`, patient_zip_code: inArea.zip_code };
  const bare = await post(phi, { ...base, insurance: 'Aetna Medicare Advantage', payor_id: payorIds[0] });
  t.match((await storedIntake(bare.json().data.intake_id)).insurance, [
    { plan_name: 'Aetna Medicare Advantage', payor_id: payorIds[0], coverage_order: 0, policy_holder: null },
  ]);
  const payorOnly = await post(phi, { ...base, payor_id: payorIds[1] });
  t.match((await storedIntake(payorOnly.json().data.intake_id)).insurance, [
    { plan_name: null, payor_id: payorIds[1], coverage_order: 0 },
  ]);
  const none = await post(phi, base);
  t.same((await storedIntake(none.json().data.intake_id)).insurance, []);
});

t.test(
  'insurance object: coverage_order and is_primary derive each other, X12 1069 by code or name, policy holder',
  async (t) => {
    const base = {
      service_line: 'home_health',
      patient_name: `Ned ${uniqueLast()}`,
      patient_zip_code: inArea.zip_code,
    };
    const intakeOf = async (insurance: Body, extra: Body = {}) => {
      const res = await post(phi, { ...base, insurance, ...extra });
      t.equal(res.statusCode, 200, res.body);
      return {
        data: res.json().data,
        intake: await storedIntake(res.json().data.intake_id),
        referral: await storedReferral(res.json().data.referral_id),
      };
    };
    t.match((await intakeOf({ is_primary: true })).intake.insurance, [{ coverage_order: 0 }]);
    const secondary = await intakeOf({ is_primary: false, payor_id: payorIds[1] }, { payor_id: payorIds[0] });
    t.match(
      secondary.intake.insurance,
      [
        { coverage_order: 0, payor_id: payorIds[0] },
        { coverage_order: 1, payor_id: payorIds[1] },
      ],
      'payor_id is the primary next to a secondary object',
    );
    t.equal(secondary.referral.payor_id, payorIds[0]);
    t.match((await intakeOf({ coverage_order: 2 })).intake.insurance, [{ coverage_order: 2 }]);
    const fromObject = await intakeOf({ payor_id: payorIds[1] });
    t.equal(fromObject.referral.payor_id, payorIds[1], "the primary coverage's payor is the referral's payor");

    const spouse = await intakeOf({
      relationship_to_insured: 'spouse',
      insured_first_name: 'Pat',
      insured_last_name: 'Doe',
      insured_dob: '1940-02-02',
      insured_gender: 'male',
      insured_address_line_1: '1 Main St',
      insured_city: 'Columbus',
      insured_state: 'oh',
      insured_zip_code: '43215',
      member_since: 1999,
    });
    t.match(spouse.intake.insurance, [
      {
        policy_holder: {
          relationship_to_insured: '01',
          first_name: 'Pat',
          last_name: 'Doe',
          dob: '1940-02-02',
          gender: 'male',
          address: { line1: '1 Main St', city: 'Columbus', state: 'OH', zip_code: '43215' },
        },
        policy_holder_confirmed: false,
      },
    ]);
    t.same(spouse.data.missing_information, []);
    t.same(
      spouse.referral.additional_fields,
      { insurance: { member_since: 1999 } },
      'unknown insurance keys are kept too',
    );
    t.match(
      (await intakeOf({ relationship_to_insured: 'Life Partner', insured_first_name: 'Lee', insured_last_name: 'Roe' }))
        .intake.insurance,
      [{ policy_holder: { relationship_to_insured: '53' } }],
    );
    t.match(
      (await intakeOf({ relationship_to_insured: 'g8', insured_first_name: 'Lee', insured_last_name: 'Roe' })).intake
        .insurance,
      [{ policy_holder: { relationship_to_insured: 'G8' } }],
    );
    t.match(
      (await intakeOf({ relationship_to_insured: '18' })).intake.insurance,
      [{ policy_holder: null }],
      'self needs no policy holder',
    );

    const dependent = await intakeOf({ relationship_to_insured: '19', insured_dob: '1960-03-03' });
    t.same(
      dependent.data.missing_information,
      ['policy_holder_name'],
      'a dependent without the holder name is accepted and asked for',
    );
    t.same(dependent.intake.missing_information, ['policy_holder_name']);
    t.match(dependent.intake.insurance, [
      { policy_holder: { relationship_to_insured: '19', first_name: null, last_name: null, dob: '1960-03-03' } },
    ]);
  },
);

t.test('insurance refusals name the field', async (t) => {
  const base = { service_line: 'home_health', patient_name: `Una ${uniqueLast()}`, patient_zip_code: inArea.zip_code };
  invalidInput(
    t,
    await post(phi, { ...base, insurance: { is_primary: true, coverage_order: 1 } }),
    'insurance.is_primary',
  );
  invalidInput(
    t,
    await post(phi, { ...base, insurance: { is_primary: false, coverage_order: 0 } }),
    'insurance.is_primary',
  );
  invalidInput(
    t,
    await post(phi, { ...base, insurance: { relationship_to_insured: 'cousin' } }),
    'insurance.relationship_to_insured',
  );
  invalidInput(
    t,
    await post(phi, { ...base, insurance: { effective_date: '2026-02-01', termination_date: '2026-01-01' } }),
    'insurance.termination_date',
  );
  invalidInput(
    t,
    await post(phi, { ...base, payor_id: payorIds[0], insurance: { payor_id: payorIds[1] } }),
    'insurance.payor_id',
  );
  invalidInput(t, await post(phi, { ...base, insurance: { payor_id: 'pay_unknown' } }), 'insurance.payor_id');
});

t.test('diagnoses: the first is primary unless is_primary says otherwise; two primaries are a 400', async (t) => {
  const base = { service_line: 'hospice', patient_name: `Dot ${uniqueLast()}`, patient_zip_code: inArea.zip_code };
  const diagnosesOf = async (diagnoses: Body[]) => {
    const res = await post(phi, { ...base, diagnoses });
    return {
      data: res.json().data,
      stored: (await storedIntake(res.json().data.intake_id)).diagnoses.map((d) => d.is_primary),
    };
  };
  t.same((await diagnosesOf([{ code: 'C34.90' }, { code: 'J44.9' }])).stored, [true, false]);
  t.same((await diagnosesOf([{ code: 'C34.90' }, { code: 'J44.9', is_primary: true }])).stored, [false, true]);
  const none = await diagnosesOf([{ code: 'C34.90', is_primary: false }, { code: 'J44.9' }]);
  t.same(none.stored, [false, false]);
  t.same(none.data.missing_information, ['primary_diagnosis']);
  invalidInput(
    t,
    await post(phi, {
      ...base,
      diagnoses: [
        { code: 'C34.90', is_primary: true },
        { code: 'J44.9', is_primary: true },
      ],
    }),
    'diagnoses[1].is_primary',
  );
  t.equal(
    (await post(phi, { ...base, diagnoses: [{ description: 'no code' }] })).statusCode,
    400,
    'the contract requires a code',
  );
});

t.test('document_ids must be documents of the agency, each once', async (t) => {
  const base = { service_line: 'home_health', patient_name: `Eve ${uniqueLast()}`, patient_zip_code: inArea.zip_code };
  const unknown = await post(phi, { ...base, document_ids: [documentIds[0], 'doc_missing'] });
  invalidInput(t, unknown, 'document_ids[1]');
  t.equal(unknown.json().error.details.id, 'doc_missing');
  invalidInput(t, await post(phi, { ...base, document_ids: [documentIds[0], documentIds[0]] }), 'document_ids[1]');
});

t.test('custom_data holds scalars only: anything else is a 400 naming the key', async (t) => {
  const res = await post(phi, {
    service_line: 'home_health',
    patient_name: `Gus ${uniqueLast()}`,
    custom_data: { ok: 1, caregiver: { name: 'Ann' } },
  });
  t.equal(res.statusCode, 400);
  t.match(res.json(), {
    code: 'PLATFORM_INVALID_REQUEST',
    issues: [{ location: 'body', path: '/custom_data/caregiver' }],
  });
});

t.test(
  'physician, payor, source, hospital and marketer ids must exist in the agency: a 400 naming the field',
  async (t) => {
    const fields = [
      'referral_source_id',
      'referring_physician_id',
      'signing_physician_id',
      'certifying_physician_id',
      'payor_id',
      'hospital_id',
      'marketer_id',
    ];
    for (const field of fields) {
      const res = await post(phi, {
        service_line: 'home_health',
        patient_name: `Kit ${uniqueLast()}`,
        [field]: 'x_unknown',
      });
      invalidInput(t, res, field);
      t.match(res.json().error, { details: { id: 'x_unknown' }, message: new RegExp(field) });
    }
  },
);

t.test("another agency's patient, document and physician ids are refused exactly like unknown ones", async (t) => {
  const base = { service_line: 'home_health', patient_name: 'Bo Peep' };
  const pairs: [string, Body, Body][] = [
    ['patient_id', { patient_id: idlePatient.id }, { patient_id: 'pat_unknown' }],
    ['document_ids[0]', { document_ids: [documentIds[0]] }, { document_ids: ['doc_unknown'] }],
    ['referring_physician_id', { referring_physician_id: physicianId }, { referring_physician_id: 'phy_unknown' }],
  ];
  const before = await counts(otherAgency.integration.agencyId);
  for (const [field, foreign, unknown] of pairs) {
    const [foreignRes, unknownRes] = [
      await post(otherAgency, { ...base, ...foreign }),
      await post(otherAgency, { ...base, ...unknown }),
    ];
    invalidInput(t, foreignRes, field);
    const strip = (res: Response) => ({
      ...res.json().error,
      message: '',
      correlationId: '',
      details: { ...res.json().error.details, id: '' },
    });
    t.same(strip(foreignRes), strip(unknownRes), `${field}: same refusal as an unknown id`);
  }
  t.same(await counts(otherAgency.integration.agencyId), before);
});

t.test('an idempotent retry replays the first response and creates nothing new', async (t) => {
  const idempotencyKey = key();
  const body = { service_line: 'home_health', patient_name: `Ray ${uniqueLast()}`, zip_code: inArea.zip_code };
  const first = await post(phi, body, { 'idempotency-key': idempotencyKey });
  const after = await counts();
  const retry = await post(phi, body, { 'idempotency-key': idempotencyKey });
  t.equal(retry.statusCode, 200);
  t.equal(retry.headers['idempotent-replayed'], 'true');
  t.equal(retry.body, first.body);
  t.equal(retry.headers.deprecation, first.headers.deprecation, 'the deprecation signal is replayed too');
  t.same(await counts(), after);
  const changed = await post(phi, { ...body, notes: 'changed' }, { 'idempotency-key': idempotencyKey });
  t.equal(changed.json().error.code, 'PLATFORM_IDEMPOTENCY_CONFLICT');
});

t.test('a failing rule leaves nothing written, however late it fails', async (t) => {
  const before = await counts();
  const packet = currentPacket();
  const lateFailure = await post(phi, { ...packet, document_ids: [documentIds[0], 'doc_missing'] });
  invalidInput(t, lateFailure, 'document_ids[1]');
  invalidInput(
    t,
    await post(phi, {
      ...packet,
      diagnoses: [
        { code: 'C34.90', is_primary: true },
        { code: 'J44.9', is_primary: true },
      ],
    }),
    'diagnoses[1].is_primary',
  );
  t.same(await counts(), before);
  t.match(
    await auditOf(lateFailure),
    { outcome: 'failure', status: 400, source_system: 'hospital_ehr_hub', external_reference_id: 'EHR-2026-000123' },
    "the refused attempt is audited with the sender's reference",
  );
});

t.test('text the database cannot store and a future dob are 400s naming the field, not 500s', async (t) => {
  const base = { service_line: 'home_health', patient_name: `Max ${uniqueLast()}` };
  // Refused by the gateway's request validation, as in every operation (test/gateway/unstorable-text.test.ts).
  const unstorable = async (body: Body, path: string) => {
    const res = await post(phi, body);
    t.equal(res.statusCode, 400, res.body);
    t.match(res.json(), {
      code: 'PLATFORM_INVALID_REQUEST',
      issues: [{ location: 'body', path, keyword: 'storableText' }],
    });
  };
  await unstorable({ ...base, notes: 'bad\u0000byte' }, '/notes');
  await unstorable({ ...base, custom_data: { 'k\u0000': 1 } }, '/custom_data/k\u0000');
  await unstorable({ ...base, extra: ['ok', '\ud800'] }, '/extra/1');
  invalidInput(t, await post(phi, { ...base, patient_dob: '2999-01-01' }), 'patient_dob');
  t.equal(
    (await post(phi, { ...base, patient_dob: '1950-02-30' })).statusCode,
    400,
    'the contract refuses an impossible date',
  );
});

t.test('a no_phi session is refused: the route is x-svc-no-phi denied', async (t) => {
  const res = await post(noPhi, { service_line: 'home_health', patient_name: 'No Body' });
  t.equal(res.statusCode, 403);
  t.equal(res.json().error.code, 'PLATFORM_PHI_MODE_DENIED');
});

t.test('contract version 1 answers without request_shape and missing_information', async (t) => {
  const res = await post(
    phi,
    { service_line: 'home_health', patient_name: `Vic ${uniqueLast()}` },
    { 'svc-contract-version': '1' },
  );
  t.equal(res.statusCode, 200);
  t.equal(res.headers['svc-extension-contract-version'], '1');
  const data = res.json().data;
  t.notOk('request_shape' in data);
  t.notOk('missing_information' in data);
  t.match(data, { disposition: 'accepted', patient_created: true });
  t.match(res.json().meta.deprecations, [
    { kind: 'contract_version', name: '1' },
    { kind: 'request_shape', name: '2026-04-01' },
  ]);
  const v2 = await post(phi, { service_line: 'home_health', patient_name: `Vic ${uniqueLast()}` });
  t.same(v2.json().data.missing_information, ['patient_zip_code']);
});

for (const [name, zip] of [
  ['with a ZIP', { patient_zip_code: inArea.zip_code }],
  ['without a ZIP (the lock is taken alone)', {}],
] as const) {
  t.test(`concurrent referrals for one new person (different idempotency keys) open one chart, ${name}`, async (t) => {
    const last = uniqueLast();
    const body = {
      service_line: 'home_health',
      patient_first_name: 'Rosa',
      patient_last_name: last,
      patient_dob: '1941-05-06',
      patient_phone: '617-555-0199',
      ...zip,
    };
    const answers = await Promise.all(Array.from({ length: 8 }, () => post(phi, body)));
    t.same(
      answers.map((a) => a.statusCode),
      Array(8).fill(200),
    );
    const charts = await db
      .selectFrom('patients')
      .select('id')
      .where('agency_id', '=', agencyId)
      .where('last_name', '=', last)
      .execute();
    t.equal(charts.length, 1, 'exactly one chart');
    t.equal(
      answers.filter((a) => a.json().data.patient_created).length,
      1,
      'one referral opened it, the others matched it',
    );
    t.ok(answers.every((a) => a.json().data.patient_id === charts[0].id));
  });
}
