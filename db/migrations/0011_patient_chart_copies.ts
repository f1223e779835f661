import { sql, type Kysely } from 'kysely';

/**
 * The chart's coverages (with their payor's name, primary first) and episodes (newest first) as JSON copies on the
 * patient row, so a chart is read as one row. Building them per read from coverages, payors and episodes cost the
 * database three times the primary-key read itself. The tables stay the truth: statement triggers rewrite a
 * patient's copies in the same transaction as any insert, update or delete of their rows, and a payor's rename.
 * `json`, not `jsonb`: kept as written, so a read sends the text on without converting it back.
 */
export const CHART_COPIES = sql`
  chart_coverages = coalesce((
    select json_agg(c order by c.coverage_order, c.id) from (
      select coverages.id, coverages.payor_id, payors.name as payor_name, coverages.plan_name, coverages.policy_number,
        coverages.group_number, coverages.effective_date, coverages.termination_date, coverages.coverage_order,
        coverages.relationship_to_insured, coverages.insured_first_name, coverages.insured_middle_name, coverages.insured_last_name,
        coverages.insured_suffix, coverages.insured_dob, coverages.insured_gender, coverages.insured_address_line_1,
        coverages.insured_address_line_2, coverages.insured_city, coverages.insured_state, coverages.insured_zip_code
      from coverages
      left join payors on payors.agency_id = coverages.agency_id and payors.id = coverages.payor_id
      where coverages.agency_id = patients.agency_id and coverages.patient_id = patients.id) c), '[]'),
  chart_episodes = coalesce((
    select json_agg(e order by e.start_date desc, e.id desc) from (
      select episodes.id, episodes.type, episodes.status, episodes.start_date, episodes.end_date
      from episodes
      where episodes.agency_id = patients.agency_id and episodes.patient_id = patients.id) e), '[]')`;

/** Per event, the transition tables PostgreSQL gives a statement trigger and the rows in them that name changed charts. */
const EVENTS = {
  insert: { tables: sql`new table as new_rows`, changed: sql`select agency_id, patient_id from new_rows` },
  update: {
    tables: sql`old table as old_rows new table as new_rows`,
    changed: sql`select agency_id, patient_id from old_rows union select agency_id, patient_id from new_rows`,
  },
  delete: { tables: sql`old table as old_rows`, changed: sql`select agency_id, patient_id from old_rows` },
};
type ChangeEvent = keyof typeof EVENTS;
const CHANGE_EVENTS = Object.keys(EVENTS) as ChangeEvent[];

/** Locks the charts in key order before rewriting them, so two statements that change several of the same charts cannot deadlock. */
async function createRefresh(db: Kysely<any>): Promise<void> {
  await sql`
    create function refresh_patient_charts(agency_ids text[], patient_ids text[]) returns void language sql as $$
      with changed as materialized (
        select patients.agency_id, patients.id from patients
        join (select distinct agency_id, patient_id from unnest(agency_ids, patient_ids) as k(agency_id, patient_id)) k
          on patients.agency_id = k.agency_id and patients.id = k.patient_id
        order by patients.agency_id, patients.id
        for update of patients)
      update patients set ${CHART_COPIES}
      from changed
      where patients.agency_id = changed.agency_id and patients.id = changed.id
    $$`.execute(db);
}

/** PostgreSQL allows transition tables on single-event triggers only: one function per event, one trigger per event and table. */
async function createRefreshTriggerFunctions(db: Kysely<any>): Promise<void> {
  for (const event of CHANGE_EVENTS) {
    await sql`
      create function ${sql.id(`patient_charts_after_${event}`)}() returns trigger language plpgsql as $$
      begin
        perform refresh_patient_charts(array_agg(agency_id), array_agg(patient_id)) from (${EVENTS[event].changed}) changed;
        return null;
      end
      $$`.execute(db);
  }
}

async function refreshOnChangesOf(db: Kysely<any>, table: 'coverages' | 'episodes'): Promise<void> {
  for (const event of CHANGE_EVENTS) {
    await sql`
      create trigger ${sql.id(`${table}_refresh_charts_after_${event}`)} after ${sql.raw(event)} on ${sql.table(table)}
      referencing ${EVENTS[event].tables} for each statement execute function ${sql.id(`patient_charts_after_${event}`)}()`.execute(
      db,
    );
  }
}

async function refreshOnPayorRename(db: Kysely<any>): Promise<void> {
  await sql`
    create function patient_charts_after_payor_rename() returns trigger language plpgsql as $$
    begin
      perform refresh_patient_charts(array_agg(coverages.agency_id), array_agg(coverages.patient_id))
      from new_rows
      join old_rows on old_rows.agency_id = new_rows.agency_id and old_rows.id = new_rows.id
      join coverages on coverages.agency_id = new_rows.agency_id and coverages.payor_id = new_rows.id
      where new_rows.name is distinct from old_rows.name;
      return null;
    end
    $$`.execute(db);
  await sql`
    create trigger payors_refresh_charts_after_update after update on payors
    referencing old table as old_rows new table as new_rows for each statement execute function patient_charts_after_payor_rename()`.execute(
    db,
  );
}

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table patients
      add column chart_coverages json not null default '[]',
      add column chart_episodes json not null default '[]'`.execute(db);
  await createRefresh(db);
  await createRefreshTriggerFunctions(db);
  await refreshOnChangesOf(db, 'coverages');
  await refreshOnChangesOf(db, 'episodes');
  await refreshOnPayorRename(db);
  await sql`
    select refresh_patient_charts(array_agg(agency_id), array_agg(patient_id))
    from (select agency_id, patient_id from coverages union select agency_id, patient_id from episodes) charted`.execute(
    db,
  );
}
