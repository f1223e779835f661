import { sql, type Kysely } from 'kysely';
import { CHART_COPIES } from './0011_patient_chart_copies.js';

/**
 * A chart's coverages and episodes are part of the patient a client reads, so changing them moves the patient's
 * `updated_at` (what `updated_since` filters on). An inserted row brings its own `updated_at` (now, unless it is
 * history being loaded, like the demo seed's); an update, a delete or a payor's rename is a change now (0011's
 * trigger functions for those keep calling the two-argument refresh). A chart's `updated_at` never moves back.
 */
async function refreshWithChangeTimes(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function refresh_patient_charts(agency_ids text[], patient_ids text[], changed_ats timestamptz[]) returns void language sql as $$
      with changed as materialized (
        select patients.agency_id, patients.id, k.changed_at from patients
        join (
          select agency_id, patient_id, max(changed_at) as changed_at
          from unnest(agency_ids, patient_ids, changed_ats) as k(agency_id, patient_id, changed_at)
          group by agency_id, patient_id) k
          on patients.agency_id = k.agency_id and patients.id = k.patient_id
        order by patients.agency_id, patients.id
        for update of patients)
      update patients set ${CHART_COPIES}, updated_at = greatest(patients.updated_at, changed.changed_at)
      from changed
      where patients.agency_id = changed.agency_id and patients.id = changed.id
    $$`.execute(db);
  await sql`
    create or replace function refresh_patient_charts(agency_ids text[], patient_ids text[]) returns void language sql as $$
      select refresh_patient_charts(agency_ids, patient_ids, array_fill(now(), array[coalesce(cardinality(agency_ids), 0)]))
    $$`.execute(db);
  await sql`
    create or replace function patient_charts_after_insert() returns trigger language plpgsql as $$
    begin
      perform refresh_patient_charts(array_agg(agency_id), array_agg(patient_id), array_agg(updated_at)) from new_rows;
      return null;
    end
    $$`.execute(db);
}

/** Charts whose coverages or episodes changed after the patient row did, before this migration. */
async function catchUp(db: Kysely<any>): Promise<void> {
  await sql`
    update patients set updated_at = parts.changed_at
    from (
      select agency_id, patient_id, max(updated_at) as changed_at
      from (select agency_id, patient_id, updated_at from coverages union all select agency_id, patient_id, updated_at from episodes) p
      group by agency_id, patient_id) parts
    where patients.agency_id = parts.agency_id and patients.id = parts.patient_id and parts.changed_at > patients.updated_at`.execute(
    db,
  );
}

export async function up(db: Kysely<any>): Promise<void> {
  await refreshWithChangeTimes(db);
  await catchUp(db);
}
