import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import t from 'tap';
import type { DB } from '../../src/db/schema.js';
import { testDatabase } from '../helpers/database.js';

const { db } = await testDatabase();

/** An agency with one office and one patient (ids are the same in every agency, like seeded demo data). */
async function agencyWithPatient(db: Kysely<DB>): Promise<string> {
  const agencyId = `agy_${randomUUID()}`;
  await db.insertInto('agencies').values({ id: agencyId, name: 'Schema Test Home Health' }).execute();
  await db
    .insertInto('offices')
    .values({ agency_id: agencyId, id: 'off_1', name: 'Main', timezone: 'America/Chicago' })
    .execute();
  await db
    .insertInto('patients')
    .values({
      agency_id: agencyId,
      id: 'pat_1',
      first_name: 'Zoë',
      last_name: 'Muñoz',
      dob: '1941-03-09',
      latitude: '41.881832',
      longitude: '-87.623177',
      office_id: 'off_1',
      service_line: 'home_health',
      status: 'active',
      match_first_name: 'zoe',
      match_last_name: 'munoz',
    })
    .execute();
  return agencyId;
}

const agencyA = await agencyWithPatient(db);
const agencyB = await agencyWithPatient(db);

function episode(agencyId: string, id: string, patientId = 'pat_1') {
  return {
    agency_id: agencyId,
    id,
    patient_id: patientId,
    type: 'home_health_period',
    status: 'closed',
    start_date: '2026-01-01',
    end_date: '2026-01-30',
  } as const;
}

t.test('a reference into another agency is refused by the database', async (t) => {
  await db
    .insertInto('patients')
    .values({
      agency_id: agencyA,
      id: 'pat_only_a',
      first_name: 'A',
      last_name: 'A',
      service_line: 'hospice',
      status: 'referred',
      match_first_name: 'a',
      match_last_name: 'a',
    })
    .execute();
  await t.rejects(
    db
      .insertInto('episodes')
      .values(episode(agencyB, 'epi_y', 'pat_only_a'))
      .execute(),
    { code: '23503', constraint: 'episodes_patient_id_fk' },
  );
  await t.rejects(
    db
      .updateTable('patients')
      .set({ office_id: 'off_elsewhere' })
      .where('agency_id', '=', agencyA)
      .where('id', '=', 'pat_1')
      .execute(),
    { code: '23503', constraint: 'patients_office_id_fk' },
  );
  await db.insertInto('episodes').values(episode(agencyA, 'epi_1')).execute();
  t.pass('the same patient id in its own agency is accepted');
});

t.test("a visit cannot hang off another patient's episode", async (t) => {
  const visit = {
    agency_id: agencyA,
    id: 'vis_1',
    patient_id: 'pat_only_a',
    episode_id: 'epi_1',
    discipline: 'SN',
    visit_type: 'routine',
    status: 'scheduled',
    scheduled_start: new Date('2026-01-05T15:00:00Z'),
    scheduled_end: new Date('2026-01-05T16:00:00Z'),
    evv_status: 'unverified',
    documentation_status: 'not_started',
  } as const;
  await t.rejects(db.insertInto('visits').values(visit).execute(), {
    code: '23503',
    constraint: 'visits_episode_id_fk',
  });
  await db
    .insertInto('visits')
    .values({ ...visit, patient_id: 'pat_1' })
    .execute();
  t.pass("the patient's own episode is accepted");
});

t.test('CHECK constraints refuse values outside each enum', async (t) => {
  const refusals: [string, () => Promise<unknown>][] = [
    [
      'patients_status_check',
      () =>
        db
          .updateTable('patients')
          .set({ status: 'admitted' as never })
          .where('agency_id', '=', agencyA)
          .execute(),
    ],
    [
      'patients_service_line_check',
      () =>
        db
          .updateTable('patients')
          .set({ service_line: 'dialysis' as never })
          .where('agency_id', '=', agencyA)
          .execute(),
    ],
    [
      'patients_zip_code_format',
      () => db.updateTable('patients').set({ zip_code: '6060' }).where('agency_id', '=', agencyA).execute(),
    ],
    [
      'episodes_status_check',
      () =>
        db
          .updateTable('episodes')
          .set({ status: 'open' as never })
          .where('agency_id', '=', agencyA)
          .execute(),
    ],
    [
      'visits_discipline_check',
      () =>
        db
          .updateTable('visits')
          .set({ discipline: 'RN' as never })
          .where('agency_id', '=', agencyA)
          .execute(),
    ],
    [
      'visits_status_check',
      () =>
        db
          .updateTable('visits')
          .set({ status: 'done' as never })
          .where('agency_id', '=', agencyA)
          .execute(),
    ],
    [
      'visits_actuals_by_status',
      () => db.updateTable('visits').set({ status: 'completed' }).where('agency_id', '=', agencyA).execute(),
    ],
    [
      'tasks_priority_check',
      () =>
        db
          .insertInto('tasks')
          .values({
            agency_id: agencyA,
            id: 'tsk_1',
            title: 'Call',
            status: 'open',
            priority: 'critical' as never,
            created_by: 'usr_1',
          })
          .execute(),
    ],
    [
      'tasks_completed_at',
      () =>
        db
          .insertInto('tasks')
          .values({
            agency_id: agencyA,
            id: 'tsk_2',
            title: 'Call',
            status: 'done',
            priority: 'low',
            created_by: 'usr_1',
          })
          .execute(),
    ],
    [
      'coverages_relationship_to_insured_check',
      () =>
        db
          .insertInto('coverages')
          .values({
            agency_id: agencyA,
            id: 'cov_1',
            patient_id: 'pat_1',
            coverage_order: 0,
            relationship_to_insured: 'spouse' as never,
          })
          .execute(),
    ],
    [
      'agency_users_clinician_discipline',
      () =>
        db
          .insertInto('agency_users')
          .values({ agency_id: agencyA, id: 'usr_1', role: 'clinician', first_name: 'A', last_name: 'B' })
          .execute(),
    ],
  ];
  for (const [constraint, write] of refusals) await t.rejects(write(), { code: '23514', constraint }, constraint);
});

t.test('a referral and its intake point at each other, checked when the transaction commits', async (t) => {
  const referral = {
    agency_id: agencyA,
    service_line: 'home_health',
    referral_type_category: 'soc',
    referral_date: new Date('2026-02-01T12:00:00Z'),
    disposition: 'accepted',
    request_shape: '2026-08-19',
  } as const;
  const intake = {
    agency_id: agencyA,
    status: 'pending_review',
    received_at: new Date('2026-02-01T12:01:00Z'),
  } as const;
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('referrals')
      .values({ ...referral, id: 'ref_1', intake_id: 'int_1' })
      .execute();
    await trx
      .insertInto('intakes')
      .values({ ...intake, id: 'int_1', referral_id: 'ref_1' })
      .execute();
  });
  await t.rejects(
    db.transaction().execute(async (trx) => {
      await trx
        .insertInto('referrals')
        .values({ ...referral, id: 'ref_2', intake_id: 'int_2' })
        .execute();
    }),
    { code: '23503', constraint: 'referrals_intake_id_fk' },
    'a referral without its intake',
  );
  await t.rejects(
    db.transaction().execute(async (trx) => {
      await trx
        .insertInto('referrals')
        .values([
          { ...referral, id: 'ref_3', intake_id: 'int_3' },
          { ...referral, id: 'ref_4', intake_id: 'int_4' },
        ])
        .execute();
      await trx
        .insertInto('intakes')
        .values([
          { ...intake, id: 'int_3', referral_id: 'ref_4' },
          { ...intake, id: 'int_4', referral_id: 'ref_3' },
        ])
        .execute();
    }),
    { code: '23503', constraint: 'intakes_referral_pair_fk' },
    'intakes claiming referrals that name other intakes',
  );
  await t.rejects(
    db
      .insertInto('referrals')
      .values({ ...referral, id: 'ref_5', intake_id: 'int_5', disposition: 'declined' })
      .execute(),
    { code: '23514', constraint: 'referrals_decline_reason' },
    'declined without a reason',
  );
});

t.test('json, array, date and numeric columns read back alike on both engines', async (t) => {
  const pending = [
    {
      payor_id: null,
      plan_name: 'Medicare Part A',
      coverage_order: 0,
      policy_holder: null,
      policy_holder_confirmed: false,
    },
  ];
  await db
    .updateTable('intakes')
    .set({
      insurance: JSON.stringify(pending),
      missing_information: ['policy_holder_name', 'insurance card'],
      custom_data: JSON.stringify({ fall_risk: true }),
    })
    .where('agency_id', '=', agencyA)
    .where('id', '=', 'int_1')
    .execute();
  const row = await db
    .selectFrom('intakes')
    .selectAll()
    .where('agency_id', '=', agencyA)
    .where('id', '=', 'int_1')
    .executeTakeFirstOrThrow();
  t.same(row.insurance, pending);
  t.same(row.missing_information, ['policy_holder_name', 'insurance card']);
  t.same(row.custom_data, { fall_risk: true });
  t.same(row.diagnoses, [], 'defaults to an empty list');
  await t.rejects(
    db
      .updateTable('intakes')
      .set({ diagnoses: JSON.stringify({ code: 'I10' }) })
      .where('agency_id', '=', agencyA)
      .execute(),
    { code: '23514', constraint: 'intakes_diagnoses_array' },
  );
  const patient = await db
    .selectFrom('patients')
    .select(['dob', 'latitude'])
    .where('agency_id', '=', agencyA)
    .where('id', '=', 'pat_1')
    .executeTakeFirstOrThrow();
  t.same(patient, { dob: '1941-03-09', latitude: '41.881832' });
});

t.test('at most one active episode per patient', async (t) => {
  await db
    .insertInto('episodes')
    .values({ ...episode(agencyB, 'epi_a1'), status: 'active', end_date: null })
    .execute();
  await t.rejects(
    db
      .insertInto('episodes')
      .values({ ...episode(agencyB, 'epi_a2'), status: 'active' })
      .execute(),
    { code: '23505' },
  );
});
