import t from 'tap';
import { measureSetFor, type ScorableMeasureSet } from '../../../src/domain/hhvbp/measure-sets.js';
import { readMeasureFile, type FileIssue } from '../../../src/domain/hhvbp/measure-file.js';

const lookup = measureSetFor(2025);
if (!lookup.found) throw new Error('PY2025 must be encoded');
const py2025: ScorableMeasureSet = lookup.set;

const HEADER =
  'measure_id,measure_name,measure_type,cohort,agency_value,achievement_threshold,benchmark,baseline_value';
const SMALLER = [
  'DYSPNEA,Improvement in Dyspnea,OASIS,smaller,70.1,60,80,65',
  'ORAL_MEDS,"Improvement in Management of Oral Medications",OASIS,smaller,55,50,70,52',
  'DC_FUNCTION,Discharge Function Score,OASIS,smaller,,50,70,48',
  'PPH,Potentially Preventable Hospitalization,Claims,smaller,7.1,9.4,6.2,8.0',
  'DTC_PAC,"Discharge to Community-Post Acute Care",Claims,smaller,55,40,60,30',
];
const file = (...rows: string[]) => [HEADER, ...rows].join('\r\n');
function issues(text: string): FileIssue[] {
  const result = readMeasureFile(text, py2025);
  return result.ok ? [] : result.issues;
}
const withRow = (index: number, row: string) => SMALLER.map((r, i) => (i === index ? row : r));

t.test('a valid smaller-volume file: canonical ids, numbers, empty values below the minimum data', async (t) => {
  const result = readMeasureFile(file(...SMALLER.map((r) => r.replace('DYSPNEA', 'dyspnea'))), py2025);
  if (!result.ok) throw new Error(JSON.stringify(result.issues));
  t.equal(result.cohort, 'smaller');
  t.same(
    result.rows[0],
    {
      row: 2,
      measureId: 'DYSPNEA',
      agencyValue: 70.1,
      achievementThreshold: 60,
      benchmark: 80,
      baselineValue: 65,
      officialAchievementPoints: null,
      officialImprovementPoints: null,
      officialWeight: null,
    },
    'ids are case-insensitive',
  );
  t.equal(result.rows[2].agencyValue, null, 'an empty agency_value: below the minimum data');
});

t.test('the published columns are optional, checked when present', async (t) => {
  const header = `${HEADER},achievement_points,improvement_points,measure_weight`;
  const published = SMALLER.map((r) => `${r},5.026,1.32,0.08571`);
  const result = readMeasureFile([header, ...published].join('\n'), py2025);
  t.ok(result.ok);
  t.match(result.ok && result.rows[0], {
    officialAchievementPoints: 5.026,
    officialImprovementPoints: 1.32,
    officialWeight: 0.08571,
  });
  t.same(issues([header, published[0].replace('0.08571', '6'), ...published.slice(1)].join('\n')), [
    { row: 2, column: 'measure_weight', message: '6 is out of range: 0 to 1 (a fraction: 0.0600 for 6 %)' },
  ]);
  t.same(issues([header, published[0].replace('1.32,', '9.5,'), ...published.slice(1)].join('\n')), [
    { row: 2, column: 'improvement_points', message: '9.5 is out of range: 0 to 9' },
  ]);
});

t.test('unknown and missing measures are refused, naming the row and the column', async (t) => {
  t.same(issues(file(...withRow(0, 'DYSPNOEA,Improvement in Dyspnea,OASIS,smaller,70,60,80,65'))), [
    {
      row: 2,
      column: 'measure_id',
      message:
        'unknown measure "DYSPNOEA" for PY2025, CMS-1780-F; its measures are DYSPNEA, ORAL_MEDS, DC_FUNCTION, PPH, DTC_PAC, HHCAHPS_CARE, HHCAHPS_COMM, HHCAHPS_ISSUES, HHCAHPS_OVERALL, HHCAHPS_RECOMMEND',
    },
    {
      row: null,
      column: 'measure_id',
      message: 'missing measures of the smaller-volume cohort for PY2025, CMS-1780-F: DYSPNEA',
    },
  ]);
  t.same(issues(file(...SMALLER, SMALLER[1])), [
    { row: 7, column: 'measure_id', message: 'ORAL_MEDS already appears on row 3' },
  ]);
  t.match(issues(file(...SMALLER.map((r) => r.replace(',smaller,', ',larger,')))), [
    {
      row: null,
      column: 'measure_id',
      message:
        /missing measures of the larger-volume cohort .*: HHCAHPS_CARE, HHCAHPS_COMM, HHCAHPS_ISSUES, HHCAHPS_OVERALL, HHCAHPS_RECOMMEND$/,
    },
  ]);
});

t.test('out-of-range and non-numeric values are refused', async (t) => {
  t.same(issues(file(...withRow(0, 'DYSPNEA,Improvement in Dyspnea,OASIS,smaller,101,60,80,65'))), [
    { row: 2, column: 'agency_value', message: '101 is out of range: 0 to 100' },
  ]);
  t.same(issues(file(...withRow(3, 'PPH,PPH,Claims,smaller,7.1,9.4,6.2,n/a'))), [
    { row: 5, column: 'baseline_value', message: '"n/a" is not a number (digits with an optional "." and sign)' },
  ]);
  t.same(issues(file(...withRow(0, 'DYSPNEA,Improvement in Dyspnea,OASIS,smaller,70,60,80 %,65'))), [
    { row: 2, column: 'benchmark', message: '"80 %" is not a number (digits with an optional "." and sign)' },
  ]);
  t.same(issues(file(...withRow(0, 'DYSPNEA,Improvement in Dyspnea,OASIS,smaller,70,,80,65'))), [
    { row: 2, column: 'achievement_threshold', message: 'a number is required' },
  ]);
  t.same(issues(file(...withRow(3, 'PPH,PPH,Claims,smaller,7.1,6.2,9.4,8'))), [
    {
      row: 5,
      column: 'benchmark',
      message: 'PPH is lower is better: its benchmark must be at or below the achievement threshold 6.2',
    },
  ]);
});

t.test('the cohort: one per file, and the smaller-volume cohort has no HHCAHPS measures', async (t) => {
  t.same(issues(file(...withRow(2, 'DC_FUNCTION,Discharge Function Score,OASIS,larger,,50,70,48'))), [
    {
      row: 4,
      column: 'cohort',
      message: "cohort mismatch: larger here, smaller on row 2; one file holds one agency's cohort",
    },
  ]);
  t.same(issues(file(...SMALLER, 'HHCAHPS_CARE,Care of Patients,HHCAHPS,smaller,90,80,88,85')), [
    {
      row: 7,
      column: 'cohort',
      message: 'the smaller-volume cohort is not scored on HHCAHPS measures; leave HHCAHPS_CARE out',
    },
  ]);
  t.same(issues(file(...withRow(0, 'DYSPNEA,Improvement in Dyspnea,OASIS,medium,70,60,80,65'))), [
    { row: 2, column: 'cohort', message: '"medium" is not a cohort: larger or smaller' },
  ]);
});

t.test('the header and the shape of the file', async (t) => {
  t.same(issues(''), [
    {
      row: null,
      column: null,
      message:
        'the file is empty; a header row is required: measure_id,measure_name,measure_type,cohort,agency_value,achievement_threshold,benchmark,baseline_value',
    },
  ]);
  t.same(issues(HEADER), [{ row: null, column: null, message: 'the file has a header row but no measure rows' }]);
  t.same(issues(file(...SMALLER).replace('baseline_value', 'baseline')), [
    {
      row: 1,
      column: 'baseline',
      message:
        'unknown column; the columns are measure_id, measure_name, measure_type, cohort, agency_value, achievement_threshold, benchmark, baseline_value, achievement_points, improvement_points, measure_weight',
    },
    { row: 1, column: 'baseline_value', message: 'required column missing from the header row' },
  ]);
  t.same(issues(file(...withRow(1, 'ORAL_MEDS,Oral,OASIS,smaller,55,50,70'))), [
    { row: 3, column: null, message: '7 fields where the header row has 8' },
  ]);
  t.same(issues(file(...withRow(1, 'ORAL_MEDS,Oral,Claims,smaller,55,50,70,52'))), [
    {
      row: 3,
      column: 'measure_type',
      message: 'ORAL_MEDS is a OASIS measure, not "Claims" (OASIS, Claims or HHCAHPS)',
    },
  ]);
  t.same(issues(file(...withRow(1, 'ORAL_MEDS,"Oral,OASIS,smaller,55,50,70,52'))), [
    { row: 6, column: null, message: 'text after the closing quote of a field opened on line 3' },
  ]);
  t.same(issues(file(...withRow(4, 'DTC_PAC,"Discharge,Claims,smaller,55,40,60,30'))), [
    { row: 6, column: null, message: 'a quoted field is never closed' },
  ]);
});

t.test('every problem of a file is reported at once', async (t) => {
  const found = issues(file(...withRow(0, 'DYSPNEA,,OASIS,smaller,abc,60,80,165')));
  t.same(
    found.map((i) => `${i.row}:${i.column}`),
    ['2:measure_name', '2:agency_value', '2:baseline_value'],
  );
});
