import type { Selectable } from 'kysely';
import type { CommandStore, TenantStore } from '../../db/tenant-store.js';
import type { HhvbpImportsTable, HhvbpMeasureResultsTable } from './hhvbp-tables.js';
import type { MeasureRow } from '../../domain/hhvbp/measure-file.js';
import type { Cohort } from '../../domain/hhvbp/measure-sets.js';

export type HhvbpImportRow = Selectable<HhvbpImportsTable>;
export type HhvbpMeasureResultRow = Selectable<HhvbpMeasureResultsTable>;

interface NewHhvbpImport {
  id: string;
  performanceYear: number;
  measureSetId: string;
  cohort: Cohort;
  officialTotalPerformanceScore: number | null;
  officialPaymentAdjustmentPercent: number | null;
  sourceFile: string;
  rows: readonly MeasureRow[];
}

/** The year's current import of the agency: the latest one, which no later import superseded. */
export function findCurrentImport(store: TenantStore, performanceYear: number): Promise<HhvbpImportRow | undefined> {
  return store
    .selectFrom('hhvbp_imports')
    .selectAll()
    .where('performance_year', '=', performanceYear)
    .where('superseded_at', 'is', null)
    .executeTakeFirst();
}

export function listMeasureResults(store: TenantStore, importId: string): Promise<HhvbpMeasureResultRow[]> {
  return store
    .selectFrom('hhvbp_measure_results')
    .selectAll()
    .where('import_id', '=', importId)
    .orderBy('source_row')
    .execute();
}

/** Every import of the agency, newest first, superseded ones included. */
export function listImports(store: TenantStore): Promise<HhvbpImportRow[]> {
  return store
    .selectFrom('hhvbp_imports')
    .selectAll()
    .orderBy('performance_year', 'desc')
    .orderBy('created_at', 'desc')
    .execute();
}

/**
 * Makes `imported` the year's current import in the command's transaction and returns the id of the one it superseded.
 * The agency row is locked first, so imports of one agency run one after another and each supersedes the one before.
 */
export async function replaceImport(
  store: CommandStore,
  imported: NewHhvbpImport,
): Promise<{ supersededId: string | null }> {
  await store.lockAgency();
  const now = new Date();
  const superseded = await store
    .updateTable('hhvbp_imports')
    .set({ superseded_at: now, updated_at: now })
    .where('performance_year', '=', imported.performanceYear)
    .where('superseded_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  await store
    .insertInto('hhvbp_imports')
    .values({
      id: imported.id,
      performance_year: imported.performanceYear,
      measure_set_id: imported.measureSetId,
      cohort: imported.cohort,
      official_total_performance_score: imported.officialTotalPerformanceScore,
      official_payment_adjustment_percent: imported.officialPaymentAdjustmentPercent,
      source_file: imported.sourceFile,
    })
    .execute();
  await store
    .insertInto('hhvbp_measure_results')
    .values(
      imported.rows.map((row) => ({
        import_id: imported.id,
        measure_id: row.measureId,
        source_row: row.row,
        agency_value: row.agencyValue,
        achievement_threshold: row.achievementThreshold,
        benchmark: row.benchmark,
        baseline_value: row.baselineValue,
        official_achievement_points: row.officialAchievementPoints,
        official_improvement_points: row.officialImprovementPoints,
        official_weight: row.officialWeight,
      })),
    )
    .execute();
  return { supersededId: superseded?.id ?? null };
}
