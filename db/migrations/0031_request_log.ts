import { sql, type Kysely } from 'kysely';

/**
 * What an integration's request log shows besides what metering had: each call's error code (null when it was
 * answered), the contract version it was served in, and whether it was an idempotent replay. Segments written before
 * this have none of the three (the view reads them as null); a segment written after has all three, one entry per call.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('metering_segments')
    .addColumn('error_codes', sql`text[]`)
    .addColumn('contract_versions', sql`text[]`)
    .addColumn('replayed', sql`boolean[]`)
    .execute();
  // Uncompressed, as the other arrays (see 0008): compressing every flush costs the database more than it saves.
  await sql`
    alter table metering_segments
      alter column error_codes set storage external, alter column contract_versions set storage external,
      alter column replayed set storage external`.execute(db);
  // Not valid: older segments have none of the three, so there is nothing to check in them; new rows are checked.
  await sql`
    alter table metering_segments add constraint metering_segments_request_log_entry_per_call check (
      (error_codes is null or cardinality(error_codes) = cardinality(operation_ids))
      and (contract_versions is null or cardinality(contract_versions) = cardinality(operation_ids))
      and (replayed is null or cardinality(replayed) = cardinality(operation_ids))) not valid`.execute(db);
  // unnest pads a missing (null) array with nulls, so older segments read back with null in the new columns.
  await sql`
    create or replace view metering_events as
    select s.id as segment_id, e.position, s.agency_id, s.extension_id, e.operation_id, e.status, e.cost_units, e.duration_ms,
      e.request_id, s.base_at + e.offset_ms * interval '1 millisecond' as occurred_at,
      e.error_code, e.contract_version, e.replayed
    from metering_segments s
    cross join lateral unnest(s.operation_ids, s.statuses, s.cost_units, s.durations_ms, s.request_ids, s.offsets_ms,
      s.error_codes, s.contract_versions, s.replayed)
      with ordinality as e(operation_id, status, cost_units, duration_ms, request_id, offset_ms, error_code, contract_version, replayed, position)`.execute(
    db,
  );
}
