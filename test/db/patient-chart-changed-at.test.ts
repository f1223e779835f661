import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import t from 'tap';
import * as changedAt from '../../db/migrations/0012_patient_chart_changed_at.js';
import { inRolledBackTransaction, testDatabase } from '../helpers/database.js';

const { db } = await testDatabase();

const LONG_AGO = new Date('2020-01-01T00:00:00Z');

async function agencyWithChart(): Promise<string> {
  const id = `agy_${randomUUID()}`;
  await db.insertInto('agencies').values({ id, name: 'Chart Changes Home Health' }).execute();
  await db
    .insertInto('payors')
    .values({ agency_id: id, id: 'pay_com', name: 'Acme Health', payor_type: 'commercial' })
    .execute();
  await db
    .insertInto('patients')
    .values({
      agency_id: id,
      id: 'pat_1',
      first_name: 'Ada',
      last_name: 'Lovelace',
      service_line: 'home_health',
      status: 'active',
      match_first_name: 'ada',
      match_last_name: 'lovelace',
      updated_at: LONG_AGO,
    })
    .execute();
  return id;
}

const agencyId = await agencyWithChart();
const otherAgencyId = await agencyWithChart();

async function updatedAt(agency = agencyId): Promise<Date> {
  const row = await db
    .selectFrom('patients')
    .select('updated_at')
    .where('agency_id', '=', agency)
    .where('id', '=', 'pat_1')
    .executeTakeFirstOrThrow();
  return new Date(row.updated_at);
}

/** The database's clock: a trigger's now() is its transaction's start, on the server, not this process's Date. */
async function databaseNow(): Promise<Date> {
  const { rows } = await sql<{ now: Date }>`select now() as now`.execute(db);
  return new Date(rows[0].now);
}

const setChartUpdatedAt = (at: Date, agency = agencyId) =>
  db
    .updateTable('patients')
    .set({ updated_at: at })
    .where('agency_id', '=', agency)
    .where('id', '=', 'pat_1')
    .execute();

t.test("an inserted coverage or episode moves the chart's updated_at to its own, never back", async (t) => {
  const before = await databaseNow();
  await db
    .insertInto('coverages')
    .values({
      agency_id: agencyId,
      id: 'cov_1',
      patient_id: 'pat_1',
      coverage_order: 0,
      payor_id: 'pay_com',
      plan_name: 'Gold',
    })
    .execute();
  t.ok((await updatedAt()) >= before, 'a new coverage is a change now');

  await setChartUpdatedAt(new Date('2025-06-01T00:00:00Z'));
  const episode = {
    agency_id: agencyId,
    patient_id: 'pat_1',
    type: 'home_health_period',
    status: 'closed',
    start_date: '2024-01-01',
  } as const;
  await db
    .insertInto('episodes')
    .values({ ...episode, id: 'epi_old', updated_at: new Date('2024-03-01T00:00:00Z') })
    .execute();
  t.same(
    await updatedAt(),
    new Date('2025-06-01T00:00:00Z'),
    'loaded history older than the chart leaves it as it was',
  );
  await db
    .insertInto('episodes')
    .values({ ...episode, id: 'epi_newer', start_date: '2025-05-01', updated_at: new Date('2025-07-01T00:00:00Z') })
    .execute();
  t.same(await updatedAt(), new Date('2025-07-01T00:00:00Z'), 'loaded history newer than the chart moves it there');
});

t.test('an update or delete of a coverage or episode is a change now', async (t) => {
  for (const change of [
    () =>
      db
        .updateTable('episodes')
        .set({ status: 'active' })
        .where('agency_id', '=', agencyId)
        .where('id', '=', 'epi_newer')
        .execute(),
    () =>
      db
        .updateTable('coverages')
        .set({ plan_name: 'Platinum' })
        .where('agency_id', '=', agencyId)
        .where('id', '=', 'cov_1')
        .execute(),
    () => db.deleteFrom('episodes').where('agency_id', '=', agencyId).where('id', '=', 'epi_old').execute(),
  ]) {
    await setChartUpdatedAt(LONG_AGO);
    const before = await databaseNow();
    await change();
    t.ok((await updatedAt()) >= before);
  }
});

t.test("a payor's rename is a change now to the charts it covers, in its own agency only", async (t) => {
  await db
    .insertInto('coverages')
    .values({ agency_id: otherAgencyId, id: 'cov_1', patient_id: 'pat_1', coverage_order: 0, payor_id: 'pay_com' })
    .execute();
  await setChartUpdatedAt(LONG_AGO);
  await setChartUpdatedAt(LONG_AGO, otherAgencyId);
  const before = await databaseNow();
  await db
    .updateTable('payors')
    .set({ name: 'Acme Health Plus' })
    .where('agency_id', '=', agencyId)
    .where('id', '=', 'pay_com')
    .execute();
  t.ok((await updatedAt()) >= before);
  t.same(await updatedAt(otherAgencyId), LONG_AGO);
});

t.test('0012 catches up charts whose parts changed after them', async (t) => {
  const { newest, caughtUp } = await inRolledBackTransaction(db, async (trx) => {
    await trx
      .updateTable('patients')
      .set({ updated_at: LONG_AGO })
      .where('agency_id', '=', agencyId)
      .where('id', '=', 'pat_1')
      .execute();
    const { rows } = await sql<{ newest: Date }>`
      select max(updated_at) as newest from (select updated_at from coverages where agency_id = ${agencyId} and patient_id = 'pat_1'
        union all select updated_at from episodes where agency_id = ${agencyId} and patient_id = 'pat_1') parts`.execute(
      trx,
    );
    await changedAt.up(trx);
    const row = await trx
      .selectFrom('patients')
      .select('updated_at')
      .where('agency_id', '=', agencyId)
      .where('id', '=', 'pat_1')
      .executeTakeFirstOrThrow();
    return { newest: new Date(rows[0].newest), caughtUp: new Date(row.updated_at) };
  });
  t.same(caughtUp, newest);
});
