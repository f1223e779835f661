import type { ColumnType } from 'kysely';
import type { TenantRow, Timestamp } from '../../db/tables/tenant-row.js';

/** numeric columns: exact decimal strings when read, numbers or strings when written. */
type Decimal = ColumnType<string, number | string, number | string>;

export interface HhvbpImportsTable extends TenantRow {
  performance_year: number;
  /** The measure set file's id (src/domain/hhvbp/measure-sets/). */
  measure_set_id: string;
  cohort: 'larger' | 'smaller';
  official_total_performance_score: Decimal | null;
  official_payment_adjustment_percent: Decimal | null;
  /** The imported file's name, for the history. */
  source_file: string;
  /** Set when a later import of the same year replaced this one. */
  superseded_at: Timestamp | null;
}

export interface HhvbpMeasureResultsTable {
  agency_id: string;
  import_id: string;
  measure_id: string;
  /** Line of the file the row came from. */
  source_row: number;
  agency_value: Decimal | null;
  achievement_threshold: Decimal;
  benchmark: Decimal;
  baseline_value: Decimal | null;
  official_achievement_points: Decimal | null;
  official_improvement_points: Decimal | null;
  official_weight: Decimal | null;
}

export interface HhvbpTables {
  hhvbp_imports: HhvbpImportsTable;
  hhvbp_measure_results: HhvbpMeasureResultsTable;
}
