import { sql, type Kysely } from 'kysely';

/**
 * Each agency's physician order revision: a fresh random value written in the same transaction as any insert, update,
 * delete or truncate of its orders, any change of an office's time zone and of the agency's order SLA. The order list
 * keeps the aging summary of a filter set with the revision it was counted at, and counts again once the revision read
 * differs (src/resources/physician-orders/aging-summary-cache.ts). Random, not a counter: equal values then mean the
 * same committed writes in whichever database a process reads.
 */

/** PostgreSQL allows transition tables on single-event triggers only: one trigger per event. */
const EVENTS = {
  insert: sql`new table as changed`,
  update: sql`new table as changed`,
  delete: sql`old table as changed`,
};

/** Agencies in key order, so that two statements revising several of the same agencies cannot deadlock. */
const REVISE = (agencies: ReturnType<typeof sql>) => sql`
  insert into physician_order_revisions (agency_id, revision)
  select agency_id, gen_random_uuid() from (select distinct agency_id from (${agencies}) a order by agency_id) agencies
  on conflict (agency_id) do update set revision = excluded.revision`;

async function reviseOnOrderWrites(db: Kysely<any>): Promise<void> {
  await sql`
    create function physician_orders_revise() returns trigger language plpgsql as $$
    begin
      ${REVISE(sql`select agency_id from changed`)};
      return null;
    end
    $$`.execute(db);
  for (const [event, tables] of Object.entries(EVENTS)) {
    await sql`
      create trigger ${sql.id(`physician_orders_revise_after_${event}`)} after ${sql.raw(event)} on physician_orders
      referencing ${tables} for each statement execute function physician_orders_revise()`.execute(db);
  }
  await sql`
    create function physician_orders_revise_all() returns trigger language plpgsql as $$
    begin
      update physician_order_revisions set revision = gen_random_uuid();
      return null;
    end
    $$`.execute(db);
  await sql`
    create trigger physician_orders_revise_after_truncate after truncate on physician_orders
    for each statement execute function physician_orders_revise_all()`.execute(db);
}

/** An office's time zone places its midnights, the agency's SLA its breaches: both change what the summary counts. */
async function reviseOnAgingClockChanges(db: Kysely<any>): Promise<void> {
  const changes = [
    { table: 'offices', column: 'timezone', agency: sql`new.agency_id` },
    { table: 'agencies', column: 'order_sla_days', agency: sql`new.id` },
  ];
  for (const { table, column, agency } of changes) {
    await sql`
      create function ${sql.id(`physician_orders_revise_after_${table}_update`)}() returns trigger language plpgsql as $$
      begin
        ${REVISE(sql`select ${agency} as agency_id`)};
        return null;
      end
      $$`.execute(db);
    await sql`
      create trigger ${sql.id(`${table}_revise_physician_orders`)} after update of ${sql.id(column)} on ${sql.table(table)}
      for each row when (old.${sql.id(column)} is distinct from new.${sql.id(column)})
      execute function ${sql.id(`physician_orders_revise_after_${table}_update`)}()`.execute(db);
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('physician_order_revisions')
    .addColumn('agency_id', 'text', (c) => c.primaryKey().references('agencies.id').onDelete('cascade'))
    .addColumn('revision', 'uuid', (c) => c.notNull())
    .execute();
  await sql`insert into physician_order_revisions (agency_id, revision) select id, gen_random_uuid() from agencies`.execute(
    db,
  );
  await reviseOnOrderWrites(db);
  await reviseOnAgingClockChanges(db);
}
