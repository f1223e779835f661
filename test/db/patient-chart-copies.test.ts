import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import t from 'tap';
import * as copies from '../../db/migrations/0011_patient_chart_copies.js';
import { inRolledBackTransaction, testDatabase } from '../helpers/database.js';

const { db } = await testDatabase();

/** An agency with two payors and two charts, under the same ids in every agency, like seeded demo data. */
async function agencyWithCharts(): Promise<string> {
  const id = `agy_${randomUUID()}`;
  await db.insertInto('agencies').values({ id, name: 'Chart Copies Home Health' }).execute();
  await db
    .insertInto('payors')
    .values([
      { agency_id: id, id: 'pay_mcr', name: 'Medicare', payor_type: 'medicare' },
      { agency_id: id, id: 'pay_com', name: 'Acme Health', payor_type: 'commercial' },
    ])
    .execute();
  const patient = (patientId: string) =>
    ({
      agency_id: id,
      id: patientId,
      first_name: 'Ada',
      last_name: patientId,
      service_line: 'home_health',
      status: 'active',
      match_first_name: 'ada',
      match_last_name: patientId,
    }) as const;
  await db
    .insertInto('patients')
    .values([patient('pat_1'), patient('pat_2')])
    .execute();
  return id;
}

const agencyId = await agencyWithCharts();
const otherAgencyId = await agencyWithCharts();

const coverage = (id: string, patientId: string, order: number, payorId: string | null, agency = agencyId) =>
  ({
    agency_id: agency,
    id,
    patient_id: patientId,
    coverage_order: order,
    payor_id: payorId,
    plan_name: `Plan ${id}`,
  }) as const;
const episode = (id: string, patientId: string, start: string, status: 'planned' | 'active' | 'closed') =>
  ({ agency_id: agencyId, id, patient_id: patientId, type: 'home_health_period', status, start_date: start }) as const;

async function chart(id: string, agency = agencyId) {
  const row = await db
    .selectFrom('patients')
    .select(['chart_coverages', 'chart_episodes'])
    .where('agency_id', '=', agency)
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return {
    coverages: row.chart_coverages.map((c) => [c.id, c.coverage_order, c.payor_name]),
    episodes: row.chart_episodes.map((e) => [e.id, e.status]),
  };
}

t.test('a new chart has empty copies', async (t) => {
  t.same(await chart('pat_1'), { coverages: [], episodes: [] });
});

t.test('coverages: inserts, reorders, moves between charts and deletes are copied in the same statement', async (t) => {
  // One statement for two charts, out of order: each chart gets its own, primary first.
  await db
    .insertInto('coverages')
    .values([
      coverage('cov_b', 'pat_1', 1, 'pay_com'),
      coverage('cov_a', 'pat_1', 0, 'pay_mcr'),
      coverage('cov_c', 'pat_2', 0, null),
    ])
    .execute();
  t.same((await chart('pat_1')).coverages, [
    ['cov_a', 0, 'Medicare'],
    ['cov_b', 1, 'Acme Health'],
  ]);
  t.same((await chart('pat_2')).coverages, [['cov_c', 0, null]]);

  await db
    .updateTable('coverages')
    .set({ coverage_order: 2 })
    .where('agency_id', '=', agencyId)
    .where('id', '=', 'cov_a')
    .execute();
  t.same((await chart('pat_1')).coverages, [
    ['cov_b', 1, 'Acme Health'],
    ['cov_a', 2, 'Medicare'],
  ]);

  await db
    .updateTable('coverages')
    .set({ patient_id: 'pat_2' })
    .where('agency_id', '=', agencyId)
    .where('id', '=', 'cov_b')
    .execute();
  t.same((await chart('pat_1')).coverages, [['cov_a', 2, 'Medicare']], 'the chart it left');
  t.same(
    (await chart('pat_2')).coverages,
    [
      ['cov_c', 0, null],
      ['cov_b', 1, 'Acme Health'],
    ],
    'the chart it joined',
  );

  await db.deleteFrom('coverages').where('agency_id', '=', agencyId).where('id', 'in', ['cov_a', 'cov_c']).execute();
  t.same((await chart('pat_1')).coverages, []);
  t.same((await chart('pat_2')).coverages, [['cov_b', 1, 'Acme Health']]);
});

t.test("a payor's new name reaches every chart it covers", async (t) => {
  await db
    .updateTable('payors')
    .set({ name: 'Acme Health Plus' })
    .where('agency_id', '=', agencyId)
    .where('id', '=', 'pay_com')
    .execute();
  t.same((await chart('pat_2')).coverages, [['cov_b', 1, 'Acme Health Plus']]);
});

t.test('episodes: newest first, status changes and deletes copied', async (t) => {
  await db
    .insertInto('episodes')
    .values([episode('epi_1', 'pat_1', '2026-01-01', 'closed'), episode('epi_2', 'pat_1', '2026-03-01', 'active')])
    .execute();
  t.same((await chart('pat_1')).episodes, [
    ['epi_2', 'active'],
    ['epi_1', 'closed'],
  ]);
  await db
    .updateTable('episodes')
    .set({ status: 'closed' })
    .where('agency_id', '=', agencyId)
    .where('id', '=', 'epi_2')
    .execute();
  t.same((await chart('pat_1')).episodes, [
    ['epi_2', 'closed'],
    ['epi_1', 'closed'],
  ]);
  await db.deleteFrom('episodes').where('agency_id', '=', agencyId).where('id', '=', 'epi_1').execute();
  t.same((await chart('pat_1')).episodes, [['epi_2', 'closed']]);
});

t.test("another agency's charts and payors under the same ids are never touched", async (t) => {
  await db
    .insertInto('coverages')
    .values(coverage('cov_x', 'pat_1', 0, 'pay_com', otherAgencyId))
    .execute();
  const before = await chart('pat_1');
  t.same((await chart('pat_1', otherAgencyId)).coverages, [['cov_x', 0, 'Acme Health']]);

  await db
    .insertInto('episodes')
    .values(episode('epi_x', 'pat_2', '2026-06-01', 'planned'))
    .execute();
  await db
    .updateTable('payors')
    .set({ name: 'Acme Health Premier' })
    .where('agency_id', '=', agencyId)
    .where('id', '=', 'pay_com')
    .execute();
  t.same(
    await chart('pat_1', otherAgencyId),
    { coverages: [['cov_x', 0, 'Acme Health']], episodes: [] },
    'the other agency keeps its own payor name',
  );
  t.same(await chart('pat_2', otherAgencyId), { coverages: [], episodes: [] });
  t.same(await chart('pat_1'), before, "the other agency's coverage stays out of this chart");
});

t.test('a rolled-back change leaves the copies as they were', async (t) => {
  const before = await chart('pat_1');
  await t.rejects(
    db.transaction().execute(async (trx) => {
      await trx
        .insertInto('episodes')
        .values(episode('epi_3', 'pat_1', '2026-05-01', 'planned'))
        .execute();
      throw new Error('abandoned');
    }),
    /abandoned/,
  );
  t.same(await chart('pat_1'), before);
});

t.test('0011 fills the copies of charts that already had coverages and episodes', async (t) => {
  const filled = await inRolledBackTransaction(db, async (trx) => {
    // The triggers are dropped and the copies emptied, as before 0011; its backfill must rebuild them.
    await sql`drop function refresh_patient_charts(text[], text[]), refresh_patient_charts(text[], text[], timestamptz[]), patient_charts_after_insert, patient_charts_after_update, patient_charts_after_delete, patient_charts_after_payor_rename cascade`.execute(
      trx,
    );
    await sql`alter table patients drop column chart_coverages, drop column chart_episodes`.execute(trx);
    await copies.up(trx);
    const rows = await trx
      .selectFrom('patients')
      .select(['id', 'chart_coverages', 'chart_episodes'])
      .where('agency_id', '=', agencyId)
      .orderBy('id')
      .execute();
    return rows.map((row) => [
      row.id,
      row.chart_coverages.map((c) => [c.id, c.payor_name]),
      row.chart_episodes.map((e) => [e.id, e.status]),
    ]);
  });
  t.same(filled, [
    ['pat_1', [], [['epi_2', 'closed']]],
    ['pat_2', [['cov_b', 'Acme Health Premier']], [['epi_x', 'planned']]],
  ]);
});
