import { sql, type Kysely } from 'kysely';

/**
 * HHVBP quality data imported per agency and performance year (admin `quality import`). Every import is kept: a
 * re-import supersedes the year's current one in the same transaction, and the partial unique index lets exactly
 * one import per agency and year be current. Measure rows belong to their import and are never changed.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('hhvbp_imports')
    .addColumn('agency_id', 'text', (c) => c.notNull().references('agencies.id'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('performance_year', 'integer', (c) => c.notNull())
    .addColumn('measure_set_id', 'text', (c) => c.notNull())
    .addColumn('cohort', 'text', (c) => c.notNull().check(sql`cohort in ('larger', 'smaller')`))
    .addColumn('official_total_performance_score', 'numeric', (c) =>
      c.check(sql`official_total_performance_score between 0 and 100`),
    )
    .addColumn('official_payment_adjustment_percent', 'numeric', (c) =>
      c.check(sql`official_payment_adjustment_percent between -5 and 5`),
    )
    .addColumn('source_file', 'text', (c) => c.notNull())
    .addColumn('superseded_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('hhvbp_imports_pk', ['agency_id', 'id'])
    .execute();
  await db.schema
    .createIndex('hhvbp_imports_current')
    .on('hhvbp_imports')
    .columns(['agency_id', 'performance_year'])
    .unique()
    .where(sql.ref('superseded_at'), 'is', null)
    .execute();

  await db.schema
    .createTable('hhvbp_measure_results')
    .addColumn('agency_id', 'text', (c) => c.notNull())
    .addColumn('import_id', 'text', (c) => c.notNull())
    .addColumn('measure_id', 'text', (c) => c.notNull())
    .addColumn('source_row', 'integer', (c) => c.notNull())
    .addColumn('agency_value', 'numeric')
    .addColumn('achievement_threshold', 'numeric', (c) => c.notNull())
    .addColumn('benchmark', 'numeric', (c) => c.notNull())
    .addColumn('baseline_value', 'numeric')
    .addColumn('official_achievement_points', 'numeric')
    .addColumn('official_improvement_points', 'numeric')
    .addColumn('official_weight', 'numeric')
    .addPrimaryKeyConstraint('hhvbp_measure_results_pk', ['agency_id', 'import_id', 'measure_id'])
    .addForeignKeyConstraint('hhvbp_measure_results_import_fk', ['agency_id', 'import_id'], 'hhvbp_imports', [
      'agency_id',
      'id',
    ])
    .execute();
}
