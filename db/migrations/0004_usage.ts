import { sql, type Kysely } from 'kysely';

// No foreign key to agencies: every lease and metering batch would take a share lock on the agency row.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('usage_windows')
    .addColumn('agency_id', 'text', (c) => c.notNull())
    .addColumn('extension_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('minute', 'day', 'cost')`))
    .addColumn('window_start', 'timestamptz', (c) => c.notNull())
    .addColumn('used', 'integer', (c) => c.notNull().check(sql`used >= 0`))
    .addColumn('last_grant', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('usage_windows_pkey', ['agency_id', 'extension_id', 'kind', 'window_start'])
    .execute();
  // For the housekeeping purge, which deletes by age across all integrations.
  await db.schema.createIndex('usage_windows_window_start').on('usage_windows').column('window_start').execute();

  await db.schema
    .createTable('metering_events')
    .addColumn('id', 'bigint', (c) => c.notNull().generatedAlwaysAsIdentity())
    .addColumn('agency_id', 'text', (c) => c.notNull())
    .addColumn('extension_id', 'text', (c) => c.notNull())
    .addColumn('operation_id', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('cost_units', 'integer', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('occurred_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('metering_events_pkey', ['agency_id', 'id'])
    .execute();
  await db.schema
    .createIndex('metering_events_agency_extension_occurred')
    .on('metering_events')
    .columns(['agency_id', 'extension_id', 'occurred_at'])
    .execute();
}
