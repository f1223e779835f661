import type { components } from '../../generated/openapi.js';
import type { CycleScore, MeasureScore } from '../../domain/hhvbp/scoring.js';
import type { ScorableMeasureSet } from '../../domain/hhvbp/measure-sets.js';
import type { HhvbpImportRow, HhvbpMeasureResultRow } from './hhvbp-repository.js';

type HhvbpSummary = components['schemas']['HhvbpSummary'];
type HhvbpMeasure = components['schemas']['HhvbpMeasure'];

/** The agency's current import of a year, its rows, and the projection scored from them. */
export interface HhvbpCycle {
  set: ScorableMeasureSet;
  imported: HhvbpImportRow;
  rows: HhvbpMeasureResultRow[];
  score: CycleScore;
  paymentYear: number;
}

const MODELED_STATEMENT =
  "Modeled values are the service's projection from the figures imported for this agency and an assumed exchange-function slope: " +
  "a diagnostic, not a determination. The regulator's Annual Performance Report is the determination.";

const COHORTS = { larger: 'larger_volume', smaller: 'smaller_volume' } as const;
const CATEGORIES = { OASIS: 'oasis', Claims: 'claims', HHCAHPS: 'hhcahps' } as const;

const decimal = (value: string | null): number | null => (value === null ? null : Number(value));

function officialCarePoints(row: HhvbpMeasureResultRow): number | null {
  const points = [row.official_achievement_points, row.official_improvement_points]
    .filter((p) => p !== null)
    .map(Number);
  return points.length === 0 ? null : Math.max(...points);
}

/** Why the totals are missing, told apart by what the import carries of the published report. */
function officialSummaryReason(cycle: HhvbpCycle): HhvbpSummary['official_regulator_unavailable_reason'] {
  const { imported, rows, set } = cycle;
  if (imported.official_total_performance_score !== null && imported.official_payment_adjustment_percent !== null)
    return null;
  const published = rows.filter((row) => officialCarePoints(row) !== null).length;
  if (published === 0 && imported.official_total_performance_score === null) return 'report_not_yet_published';
  if (published < set.scoring.minimum_scorable_measures && imported.official_total_performance_score === null)
    return 'insufficient_data';
  return 'official_totals_not_imported';
}

export function hhvbpSummaryView(cycle: HhvbpCycle): HhvbpSummary {
  const { set, imported, score } = cycle;
  return {
    performance_year: imported.performance_year,
    payment_year: cycle.paymentYear,
    cohort: COHORTS[imported.cohort],
    measure_set_version: set.version,
    measure_count: score.measures.length,
    scorable_measure_count: score.scorableCount,
    official_regulator_total_performance_score: decimal(imported.official_total_performance_score),
    official_regulator_payment_adjustment_percent: decimal(imported.official_payment_adjustment_percent),
    official_regulator_unavailable_reason: officialSummaryReason(cycle),
    modeled_total_performance_score: score.totalPerformanceScore,
    modeled_payment_adjustment_percent: score.paymentAdjustmentPercent,
    modeled_unavailable_reason: score.unavailableReason,
    modeled_exchange_function_slope: set.exchange_function.assumed_slope,
    modeled_statement: MODELED_STATEMENT,
    modeled_as_of: imported.created_at.toISOString(),
  };
}

function measureView(score: MeasureScore, row: HhvbpMeasureResultRow, reportOut: boolean): HhvbpMeasure {
  const official = officialCarePoints(row);
  return {
    measure_id: score.measure.id,
    name: score.measure.name,
    category: CATEGORIES[score.measure.type],
    direction: score.measure.direction,
    weight: score.weight,
    modeled_agency_value: decimal(row.agency_value),
    achievement_threshold: Number(row.achievement_threshold),
    benchmark: Number(row.benchmark),
    baseline_value: decimal(row.baseline_value),
    official_regulator_score: official,
    official_regulator_achievement_points: decimal(row.official_achievement_points),
    official_regulator_improvement_points: decimal(row.official_improvement_points),
    official_regulator_weight: decimal(row.official_weight),
    official_regulator_unavailable_reason:
      official !== null ? null : reportOut ? 'insufficient_data' : 'report_not_yet_published',
    modeled_score: score.carePoints,
    modeled_achievement_points: score.achievementPoints,
    modeled_improvement_points: score.improvementPoints,
    modeled_weight: score.redistributedWeight,
    modeled_unscorable_reason: score.unscorableReason,
  };
}

/** One row per measure of the cohort, in the measure set's order. */
export function hhvbpMeasureViews(cycle: HhvbpCycle): HhvbpMeasure[] {
  const byId = new Map(cycle.rows.map((row) => [row.measure_id, row]));
  const reportOut =
    cycle.imported.official_total_performance_score !== null ||
    cycle.rows.some((row) => officialCarePoints(row) !== null);
  return cycle.score.measures.map((score) => measureView(score, byId.get(score.measure.id)!, reportOut));
}
