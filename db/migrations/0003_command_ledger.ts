import { sql, type Kysely } from 'kysely';

async function createIdempotencyKeys(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('agency_id', 'text', (c) => c.notNull().references('agencies.id').onDelete('cascade'))
    .addColumn('extension_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('operation_id', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('response_headers', 'jsonb')
    .addColumn('response_body', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pkey', ['agency_id', 'extension_id', 'key'])
    // A stored response is all three columns or none (none only while the claiming transaction runs).
    .addCheckConstraint(
      'idempotency_keys_response_whole',
      sql`num_nulls(response_status, response_headers, response_body) in (0, 3)`,
    )
    .execute();
  await db.schema.createIndex('idempotency_keys_expires_at').on('idempotency_keys').column('expires_at').execute();
}

async function createAuditEvents(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('audit_events')
    .addColumn('id', 'uuid', (c) => c.notNull().defaultTo(sql`gen_random_uuid()`))
    .addColumn('agency_id', 'text', (c) => c.notNull().references('agencies.id'))
    .addColumn('extension_id', 'text', (c) => c.notNull())
    .addColumn('operation_id', 'text', (c) => c.notNull())
    .addColumn('resource_type', 'text')
    .addColumn('resource_ids', sql`text[]`, (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull().check(sql`outcome in ('success', 'failure', 'denied')`))
    .addColumn('status', 'integer', (c) => c.notNull().check(sql`status between 100 and 599`))
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('phi_mode', 'text', (c) => c.notNull().check(sql`phi_mode in ('no_phi', 'phi')`))
    .addColumn('source_system', 'text')
    .addColumn('external_reference_id', 'text')
    .addColumn('occurred_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('audit_events_pkey', ['agency_id', 'id'])
    .execute();
  await db.schema
    .createIndex('audit_events_agency_occurred_at')
    .on('audit_events')
    .columns(['agency_id', 'occurred_at'])
    .execute();
}

/** The trail is evidence: the database itself refuses to change or remove a record, whatever the application does. */
async function makeAuditEventsAppendOnly(db: Kysely<any>): Promise<void> {
  await sql`
    create function audit_events_refuse_change() returns trigger language plpgsql as $$
    begin
      raise exception 'audit_events is append-only: % refused', tg_op
        using hint = 'Audit records are never changed or removed.';
    end
    $$`.execute(db);
  await sql`
    create trigger audit_events_append_only before update or delete on audit_events
    for each row execute function audit_events_refuse_change()`.execute(db);
  await sql`
    create trigger audit_events_no_truncate before truncate on audit_events
    for each statement execute function audit_events_refuse_change()`.execute(db);
}

export async function up(db: Kysely<any>): Promise<void> {
  await createIdempotencyKeys(db);
  await createAuditEvents(db);
  await makeAuditEventsAppendOnly(db);
}
