import t from 'tap';
import { measureSetFor, type ScorableMeasureSet } from '../../../src/domain/hhvbp/measure-sets.js';
import {
  achievementPoints,
  improvementPoints,
  paymentAdjustmentPercent,
  roundHalfAwayFromZero,
  scoreCycle,
  type MeasureFigures,
} from '../../../src/domain/hhvbp/scoring.js';

// Every expected figure below was worked out by hand from the formulas (42 CFR 484.360 as issue #28 states them):
//   achievement = 9 x (value - threshold) / (benchmark - threshold) + 0.5     (0 below the threshold, 10 at or past the benchmark)
//   improvement = 10 x (value - baseline) / (benchmark - baseline) - 0.5      (0 at or below the baseline, 9 at or past the benchmark)

const lookup = measureSetFor(2025);
if (!lookup.found) throw new Error('PY2025 must be encoded');
const py2025: ScorableMeasureSet = lookup.set;

const figures = (
  measureId: string,
  agencyValue: number | null,
  achievementThreshold: number,
  benchmark: number,
  baselineValue: number | null,
): MeasureFigures => ({
  measureId,
  agencyValue,
  achievementThreshold,
  benchmark,
  baselineValue,
});

t.test(
  'rounding to three decimals as the reports print them: half away from zero, on the decimal digits',
  async (t) => {
    t.equal(
      roundHalfAwayFromZero(1.0005),
      1.001,
      'Math.round(1.0005 * 1000) / 1000 would give 1 (1.0005 is 1.000499... in binary)',
    );
    t.equal(roundHalfAwayFromZero(-1.0005), -1.001);
    t.equal(roundHalfAwayFromZero(6.96875), 6.969);
    t.equal(roundHalfAwayFromZero(2.8333333), 2.833);
    t.equal(roundHalfAwayFromZero(2.675, 2), 2.68);
    t.equal(Object.is(roundHalfAwayFromZero(-0.0004), 0), true, 'never -0');
  },
);

t.test('a higher-is-better measure between threshold and benchmark', async (t) => {
  // threshold 60, benchmark 80, value 70: 9 x 10/20 + 0.5 = 5.000
  t.equal(achievementPoints('higher_is_better', 70, 60, 80), 5);
  // baseline 65: 10 x 5/15 - 0.5 = 3.3333 - 0.5 = 2.8333 -> 2.833
  t.equal(improvementPoints('higher_is_better', 70, 65, 80), 2.833);
  // value 65.2, baseline 65: 10 x 0.2/15 - 0.5 = -0.3667, kept at 0; achievement 9 x 5.2/20 + 0.5 = 2.840
  t.equal(improvementPoints('higher_is_better', 65.2, 65, 80), 0);
  t.equal(achievementPoints('higher_is_better', 65.2, 60, 80), 2.84);
  t.equal(achievementPoints('higher_is_better', 59.999, 60, 80), 0, 'below the threshold');
  t.equal(achievementPoints('higher_is_better', 60, 60, 80), 0.5, 'at the threshold: 0.5');
  t.equal(improvementPoints('higher_is_better', 65, 65, 80), 0, 'at the baseline');
});

t.test('a lower-is-better measure (hospitalization) is scored on the reversed scale', async (t) => {
  // PPH threshold 9.4, benchmark 6.2, value 7.1: 9 x (9.4 - 7.1)/(9.4 - 6.2) + 0.5 = 9 x 0.71875 + 0.5 = 6.96875 -> 6.969
  t.equal(achievementPoints('lower_is_better', 7.1, 9.4, 6.2), 6.969);
  // baseline 8.0: 10 x (8.0 - 7.1)/(8.0 - 6.2) - 0.5 = 10 x 0.5 - 0.5 = 4.500
  t.equal(improvementPoints('lower_is_better', 7.1, 8.0, 6.2), 4.5);
  // value 10 is worse than the threshold: no achievement; baseline 11: 10 x 1/4.8 - 0.5 = 1.5833 -> 1.583
  t.equal(achievementPoints('lower_is_better', 10, 9.4, 6.2), 0);
  t.equal(improvementPoints('lower_is_better', 10, 11, 6.2), 1.583);
});

t.test('a value past the benchmark: 10 achievement points, 9 improvement points', async (t) => {
  t.equal(achievementPoints('higher_is_better', 85, 60, 80), 10);
  t.equal(improvementPoints('higher_is_better', 85, 50, 80), 9);
  t.equal(achievementPoints('lower_is_better', 5, 9.4, 6.2), 10);
  t.equal(improvementPoints('lower_is_better', 5, 8, 6.2), 9);
});

t.test('the exchange function with the assumed slope 2, within the applicable percent', async (t) => {
  const exchange = { applicable_percent: 5, assumed_slope: 2 };
  t.equal(paymentAdjustmentPercent(0, exchange), -5);
  t.equal(paymentAdjustmentPercent(50, exchange), 0);
  t.equal(paymentAdjustmentPercent(75, exchange), 2.5, '5 x (0.75 x 2 - 1)');
  t.equal(paymentAdjustmentPercent(100, exchange), 5);
  t.equal(
    paymentAdjustmentPercent(100, { applicable_percent: 5, assumed_slope: 3 }),
    5,
    '5 x (3 - 1) = 10 is kept at +5',
  );
});

const smallerCohortFigures = [
  figures('DYSPNEA', 85, 60, 80, 70), // past the benchmark: care 10
  figures('ORAL_MEDS', 70, 60, 80, 65), // care max(5.000, 2.833) = 5
  figures('DC_FUNCTION', 45, 50, 70, 48), // below threshold and baseline: 0
  figures('PPH', 7.1, 9.4, 6.2, 8.0), // lower is better: care max(6.969, 4.5) = 6.969
  figures('DTC_PAC', 55, 40, 60, 30), // achievement 9 x 15/20 + 0.5 = 7.25; improvement 10 x 25/30 - 0.5 = 7.833: care 7.833
];

t.test('the smaller-volume cohort: no HHCAHPS, its own weights, every measure scored', async (t) => {
  const cycle = scoreCycle(py2025, 'smaller', smallerCohortFigures);
  t.same(
    cycle.measures.map((m) => m.measure.id),
    ['DYSPNEA', 'ORAL_MEDS', 'DC_FUNCTION', 'PPH', 'DTC_PAC'],
  );
  t.same(
    cycle.measures.map((m) => m.carePoints),
    [10, 5, 0, 6.969, 7.833],
  );
  t.match(cycle.measures[4], { achievementPoints: 7.25, improvementPoints: 7.833 }, 'improvement wins here');
  t.same(
    cycle.measures.map((m) => m.weight),
    [0.08571, 0.12857, 0.28571, 0.37143, 0.12857],
  );
  // sum of weight x care = 0.8571 + 0.64285 + 0 + 2.58849567 + 1.00708881 = 5.09553448; weights sum to 0.99999
  // TPS = 5.09553448 / 0.99999 x 10 = 50.9558543... -> 50.956
  t.equal(cycle.totalPerformanceScore, 50.956);
  // 5 x (50.956 / 100 x 2 - 1) = 5 x 0.01912 = 0.0956 -> 0.096
  t.equal(cycle.paymentAdjustmentPercent, 0.096);
  t.equal(cycle.scorableCount, 5);
  t.equal(cycle.unavailableReason, null);
});

const hhcahpsPastBenchmark = [
  'HHCAHPS_CARE',
  'HHCAHPS_COMM',
  'HHCAHPS_ISSUES',
  'HHCAHPS_OVERALL',
  'HHCAHPS_RECOMMEND',
].map((id) => figures(id, 90, 80, 88, 85));

t.test('a measure below the minimum data: unscored, its weight redistributed over the scorable ones', async (t) => {
  const cycle = scoreCycle(py2025, 'larger', [
    figures('DYSPNEA', null, 60, 80, 70),
    ...smallerCohortFigures.slice(1),
    ...hhcahpsPastBenchmark,
  ]);
  t.match(cycle.measures[0], {
    measure: { id: 'DYSPNEA' },
    unscorableReason: 'below_minimum_data_performance_year',
    carePoints: null,
    redistributedWeight: null,
  });
  t.equal(cycle.scorableCount, 9);
  // Remaining weights: 0.09 + 0.20 + 0.26 + 0.09 + 5 x 0.06 = 0.94.
  // weight x care: 0.09 x 5 + 0.20 x 0 + 0.26 x 6.969 + 0.09 x 7.833 + 0.30 x 10 = 0.45 + 0 + 1.81194 + 0.70497 + 3 = 5.96691
  // TPS = 5.96691 / 0.94 x 10 = 63.4777659... -> 63.478; adjustment 5 x (0.63478 x 2 - 1) = 1.3478 -> 1.348
  t.equal(cycle.totalPerformanceScore, 63.478);
  t.equal(cycle.paymentAdjustmentPercent, 1.348);
  t.equal(
    cycle.measures.find((m) => m.measure.id === 'PPH')!.redistributedWeight,
    0.2766,
    '0.26 / 0.94 = 0.2765957 -> 0.27660',
  );
});

t.test('care points need the baseline year too; fewer than 5 scorable measures give no TPS', async (t) => {
  const fourScorable = [
    figures('DYSPNEA', 70, 60, 80, null),
    ...smallerCohortFigures.slice(1, 4),
    figures('DTC_PAC', null, 40, 60, 30),
    ...hhcahpsPastBenchmark.map((f, i) => (i < 4 ? { ...f, agencyValue: null } : f)),
  ];
  const cycle = scoreCycle(py2025, 'larger', fourScorable);
  t.equal(cycle.measures[0].unscorableReason, 'below_minimum_data_baseline_year');
  t.equal(cycle.scorableCount, 4);
  t.match(cycle, {
    totalPerformanceScore: null,
    paymentAdjustmentPercent: null,
    unavailableReason: 'insufficient_data',
  });
  t.ok(cycle.measures.every((m) => m.redistributedWeight === null));
});
