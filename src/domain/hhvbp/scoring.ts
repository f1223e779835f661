import type { Cohort, Direction, MeasureDefinition, ScorableMeasureSet } from './measure-sets.js';
import { cohortMeasures } from './measure-sets.js';

/** One measure's figures for a cycle; a null value means the agency had less than the minimum data in that period. */
export interface MeasureFigures {
  measureId: string;
  agencyValue: number | null;
  achievementThreshold: number;
  benchmark: number;
  baselineValue: number | null;
}

type UnscorableReason = 'below_minimum_data_performance_year' | 'below_minimum_data_baseline_year';

export interface MeasureScore {
  measure: MeasureDefinition;
  /** The measure's weight in the cohort before redistribution. */
  weight: number;
  /** Its share of the TPS after the weights of unscorable measures were redistributed; null when unscorable or no TPS. */
  redistributedWeight: number | null;
  unscorableReason: UnscorableReason | null;
  achievementPoints: number | null;
  improvementPoints: number | null;
  carePoints: number | null;
}

export interface CycleScore {
  measures: MeasureScore[];
  scorableCount: number;
  totalPerformanceScore: number | null;
  paymentAdjustmentPercent: number | null;
  /** Why there is no TPS: fewer scorable measures than the set's minimum. */
  unavailableReason: 'insufficient_data' | null;
}

const POINT_DECIMALS = 3;
const WEIGHT_DECIMALS = 5;

/**
 * Rounds half away from zero at `decimals`, on the decimal digits rather than the binary value: 1.0005 is 1.001,
 * as a report computed in decimal arithmetic shows it (plain Math.round(x * 1000) / 1000 gives 1).
 */
export function roundHalfAwayFromZero(value: number, decimals = POINT_DECIMALS): number {
  // Fifteen significant digits drop the binary noise of the value before it is scaled.
  const [mantissa, exponent] = Math.abs(value).toExponential(14).split('e');
  const scaled = Math.round(Number(`${mantissa}e${Number(exponent) + decimals}`));
  return (Math.sign(value) * scaled) / 10 ** decimals || 0;
}

/** Lower-is-better measures are scored with the same formulas on the reversed scale. */
function oriented(direction: Direction, value: number): number {
  return direction === 'lower_is_better' ? -value : value;
}

export function achievementPoints(direction: Direction, value: number, threshold: number, benchmark: number): number {
  const [v, t, b] = [value, threshold, benchmark].map((x) => oriented(direction, x));
  if (v >= b) return 10;
  if (v < t) return 0;
  return roundHalfAwayFromZero((9 * (v - t)) / (b - t) + 0.5);
}

export function improvementPoints(direction: Direction, value: number, baseline: number, benchmark: number): number {
  const [v, base, b] = [value, baseline, benchmark].map((x) => oriented(direction, x));
  if (v <= base) return 0;
  if (v >= b) return 9;
  return roundHalfAwayFromZero(Math.min(9, Math.max(0, (10 * (v - base)) / (b - base) - 0.5)));
}

function scoreMeasure(measure: MeasureDefinition, weight: number, figures: MeasureFigures): MeasureScore {
  const unscored = {
    measure,
    weight,
    redistributedWeight: null,
    achievementPoints: null,
    improvementPoints: null,
    carePoints: null,
  };
  const { agencyValue, baselineValue } = figures;
  // Care points need data in both the performance year and the HHA baseline year (42 CFR 484.345, applicable measure).
  if (agencyValue === null) return { ...unscored, unscorableReason: 'below_minimum_data_performance_year' };
  if (baselineValue === null) return { ...unscored, unscorableReason: 'below_minimum_data_baseline_year' };
  const achievement = achievementPoints(
    measure.direction,
    agencyValue,
    figures.achievementThreshold,
    figures.benchmark,
  );
  const improvement = improvementPoints(measure.direction, agencyValue, baselineValue, figures.benchmark);
  return {
    ...unscored,
    unscorableReason: null,
    achievementPoints: achievement,
    improvementPoints: improvement,
    carePoints: Math.max(achievement, improvement),
  };
}

/**
 * Adjustment percent through the linear exchange function: applicable percent x (TPS / 100 x slope - 1), kept within
 * the applicable percent. The slope is the measure set's documented assumption, not CMS's national figure.
 */
export function paymentAdjustmentPercent(
  totalPerformanceScore: number,
  exchange: { applicable_percent: number; assumed_slope: number },
): number {
  const { applicable_percent: applicable, assumed_slope: slope } = exchange;
  const raw = applicable * ((totalPerformanceScore / 100) * slope - 1);
  return roundHalfAwayFromZero(Math.min(applicable, Math.max(-applicable, raw)));
}

/**
 * The modeled cycle: points per measure, then the TPS as the weighted care points of the scorable measures with the
 * other measures' weights redistributed proportionally, scaled to 0-100. `figures` holds every measure of the cohort.
 */
export function scoreCycle(set: ScorableMeasureSet, cohort: Cohort, figures: readonly MeasureFigures[]): CycleScore {
  const byId = new Map(figures.map((f) => [f.measureId, f]));
  const scored = cohortMeasures(set, cohort).map((measure) =>
    scoreMeasure(measure, measure.weight[cohort]!, byId.get(measure.id)!),
  );
  const scorable = scored.filter((score) => score.carePoints !== null);
  if (scorable.length < set.scoring.minimum_scorable_measures) {
    return {
      measures: scored,
      scorableCount: scorable.length,
      totalPerformanceScore: null,
      paymentAdjustmentPercent: null,
      unavailableReason: 'insufficient_data',
    };
  }
  const totalWeight = scorable.reduce((sum, score) => sum + score.weight, 0);
  const weightedPoints = scorable.reduce((sum, score) => sum + score.weight * score.carePoints!, 0);
  const tps = roundHalfAwayFromZero((weightedPoints / totalWeight) * 10);
  const measures = scored.map((score) =>
    score.carePoints === null
      ? score
      : { ...score, redistributedWeight: roundHalfAwayFromZero(score.weight / totalWeight, WEIGHT_DECIMALS) },
  );
  return {
    measures,
    scorableCount: scorable.length,
    totalPerformanceScore: tps,
    paymentAdjustmentPercent: paymentAdjustmentPercent(tps, set.exchange_function),
    unavailableReason: null,
  };
}
