import py2023 from './measure-sets/py2023-py2024.json' with { type: 'json' };
import py2025 from './measure-sets/py2025.json' with { type: 'json' };
import py2026 from './measure-sets/py2026.json' with { type: 'json' };

export type MeasureType = 'OASIS' | 'Claims' | 'HHCAHPS';
export type Cohort = 'larger' | 'smaller';
export type Direction = 'higher_is_better' | 'lower_is_better';

export interface MeasureDefinition {
  id: string;
  name: string;
  type: MeasureType;
  direction: Direction;
  /** Fractions of the TPS per cohort; null where the cohort does not score the measure (HHCAHPS, smaller cohort). */
  weight: Record<Cohort, number | null>;
  /** Inclusive bounds of a valid value (agency value, threshold, benchmark, baseline). */
  value_range: [number, number];
  source: string;
  confirmed: boolean;
}

interface MeasureSet {
  id: string;
  version: string;
  performance_years: number[];
  usable_for_scoring: boolean;
  why_not_usable?: string;
  measures: MeasureDefinition[];
  scoring?: { minimum_scorable_measures: number };
  exchange_function?: { applicable_percent: number; assumed_slope: number };
}

/** The repository's measure sets (src/domain/hhvbp/measure-sets/*.json), each naming the rule every figure comes from. */
const MEASURE_SETS = [py2023, py2025, py2026] as unknown as readonly MeasureSet[];

export type ScorableMeasureSet = MeasureSet & Required<Pick<MeasureSet, 'scoring' | 'exchange_function'>>;

type MeasureSetLookup =
  | { found: true; set: ScorableMeasureSet }
  | { found: false; reason: 'unknown_year' | 'not_encoded'; detail?: string };

/** Performance years whose measure set is encoded for scoring and import, in order. */
export function supportedPerformanceYears(): number[] {
  return MEASURE_SETS.filter((set) => set.usable_for_scoring)
    .flatMap((set) => set.performance_years)
    .sort((a, b) => a - b);
}

export function measureSetFor(performanceYear: number): MeasureSetLookup {
  const set = MEASURE_SETS.find((candidate) => candidate.performance_years.includes(performanceYear));
  if (!set) return { found: false, reason: 'unknown_year' };
  if (!set.usable_for_scoring || !set.scoring || !set.exchange_function)
    return { found: false, reason: 'not_encoded', detail: set.why_not_usable };
  return { found: true, set: set as ScorableMeasureSet };
}

/** The measures an agency of `cohort` is scored on: the smaller-volume cohort has no HHCAHPS measures. */
export function cohortMeasures(set: MeasureSet, cohort: Cohort): MeasureDefinition[] {
  return set.measures.filter((measure) => measure.weight[cohort] !== null);
}

/** Results of a performance year adjust payments two years later. */
export const PAYMENT_YEAR_OFFSET = 2;
