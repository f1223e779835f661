import { sql, type Kysely } from 'kysely';

/**
 * With read replicas, where in the primary's WAL each integration's last command ended: a read of that integration
 * goes to a replica only once the replica has replayed that far, so an extension always reads its own writes.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('write_positions')
    .addColumn('agency_id', 'text', (c) => c.notNull())
    .addColumn('extension_id', 'text', (c) => c.notNull())
    .addColumn('lsn', sql`pg_lsn`, (c) => c.notNull())
    .addPrimaryKeyConstraint('write_positions_pkey', ['agency_id', 'extension_id'])
    .execute();
}
