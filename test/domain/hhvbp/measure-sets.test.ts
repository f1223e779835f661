import { readdirSync, readFileSync } from 'node:fs';
import t from 'tap';
import { cohortMeasures, measureSetFor, supportedPerformanceYears } from '../../../src/domain/hhvbp/measure-sets.js';

const DIR = new URL('../../../src/domain/hhvbp/measure-sets/', import.meta.url);
const files = readdirSync(DIR)
  .filter((name) => name.endsWith('.json'))
  .map((name) => ({ name, set: JSON.parse(readFileSync(new URL(name, DIR), 'utf8')) }));

t.test('the service scores PY2023 to PY2025; PY2026 is known but not encoded, and says why', async (t) => {
  t.same(supportedPerformanceYears(), [2023, 2024, 2025]);
  t.match(measureSetFor(2026), { found: false, reason: 'not_encoded', detail: /could not be confirmed/ });
  t.same(measureSetFor(2022), { found: false, reason: 'unknown_year' });
  t.equal(files.length, 3, 'one file per measure set');
});

t.test('the measure ids of each year (listed in the README)', async (t) => {
  const ids = (year: number) => {
    const lookup = measureSetFor(year);
    return lookup.found ? lookup.set.measures.map((m) => m.id) : [];
  };
  const hhcahps = ['HHCAHPS_CARE', 'HHCAHPS_COMM', 'HHCAHPS_ISSUES', 'HHCAHPS_OVERALL', 'HHCAHPS_RECOMMEND'];
  t.same(
    ids(2023),
    ['DYSPNEA', 'ORAL_MEDS', 'TNC_SELF_CARE', 'TNC_MOBILITY', 'DTC', 'ACH', 'ED_USE', ...hhcahps],
    'the twelve measures of PY2023',
  );
  t.same(ids(2024), ids(2023), 'PY2024 keeps them');
  t.same(
    ids(2025),
    ['DYSPNEA', 'ORAL_MEDS', 'DC_FUNCTION', 'PPH', 'DTC_PAC', ...hhcahps],
    'the ten measures of PY2025',
  );
});

t.test(
  'weights: categories 35/35/30 for the larger cohort, redistributed to 50/50 for the smaller one without HHCAHPS',
  async (t) => {
    for (const year of supportedPerformanceYears()) {
      const lookup = measureSetFor(year);
      if (!lookup.found) throw new Error(`${year}`);
      const { set } = lookup;
      const sum = (cohort: 'larger' | 'smaller', type?: string) =>
        cohortMeasures(set, cohort)
          .filter((m) => !type || m.type === type)
          .reduce((total, m) => total + m.weight[cohort]!, 0);
      t.ok(
        Math.abs(sum('larger') - 1) < 0.0001 && Math.abs(sum('smaller') - 1) < 0.0001,
        `PY${year} weights sum to 1 in each cohort`,
      );
      t.same(
        [sum('larger', 'OASIS'), sum('larger', 'Claims'), sum('larger', 'HHCAHPS')].map((w) => Math.round(w * 100)),
        [35, 35, 30],
        `PY${year} categories`,
      );
      t.notOk(
        cohortMeasures(set, 'smaller').some((m) => m.type === 'HHCAHPS'),
        'no HHCAHPS in the smaller cohort',
      );
      for (const m of cohortMeasures(set, 'smaller'))
        t.ok(
          Math.abs(m.weight.smaller! - m.weight.larger! / 0.7) < 0.00001,
          `PY${year} ${m.id}: smaller weight = larger / 0.70`,
        );
    }
    const py2025 = measureSetFor(2025);
    t.match(
      py2025.found && py2025.set.measures.find((m) => m.id === 'DYSPNEA'),
      { weight: { larger: 0.06, smaller: 0.08571 }, confirmed: true },
      'Dyspnea 6.000 % / 8.571 %',
    );
    t.match(py2025.found && py2025.set.measures.find((m) => m.id === 'PPH'), {
      direction: 'lower_is_better',
      type: 'Claims',
    });
  },
);

t.test('every figure names its source, one the file defines, and says whether it was confirmed', async (t) => {
  for (const { name, set } of files) {
    for (const measure of set.measures) {
      t.ok(Object.hasOwn(set.sources, measure.source), `${name} ${measure.id}: source ${measure.source} is defined`);
      t.type(measure.confirmed, 'boolean', `${name} ${measure.id}: confirmed or not`);
    }
    if (set.usable_for_scoring) {
      t.ok(
        [set.exchange_function.source].flat().every((s: string) => Object.hasOwn(set.sources, s)),
        `${name}: exchange function sources`,
      );
      t.equal(
        set.exchange_function.confirmed,
        false,
        `${name}: the slope is an assumption, never presented as official`,
      );
      t.match(set.exchange_function.note, /ASSUMPTION/);
      t.same(
        Object.values(set.minimum_data).map((d) => (d as { count: number }).count),
        [20, 20, 40],
        `${name}: 20 episodes, 20 stays, 40 surveys`,
      );
      t.equal(set.scoring.minimum_scorable_measures, 5);
    } else {
      t.ok(set.not_confirmed.length > 0, `${name} lists what could not be confirmed`);
    }
  }
});
