import { CsvSyntaxError, readCsv, type CsvRecord } from '../csv.js';
import {
  cohortMeasures,
  type Cohort,
  type MeasureDefinition,
  type MeasureType,
  type ScorableMeasureSet,
} from './measure-sets.js';

/** Where a file is wrong: the line of the row (1 is the header; null for the file as a whole) and the column. */
export interface FileIssue {
  row: number | null;
  column: string | null;
  message: string;
}

/** One validated row: the measure's canonical id, its figures, and the regulator's published figures when present. */
export interface MeasureRow {
  row: number;
  measureId: string;
  agencyValue: number | null;
  achievementThreshold: number;
  benchmark: number;
  baselineValue: number | null;
  officialAchievementPoints: number | null;
  officialImprovementPoints: number | null;
  officialWeight: number | null;
}

type MeasureFileResult = { ok: true; cohort: Cohort; rows: MeasureRow[] } | { ok: false; issues: FileIssue[] };

const REQUIRED_COLUMNS = [
  'measure_id',
  'measure_name',
  'measure_type',
  'cohort',
  'agency_value',
  'achievement_threshold',
  'benchmark',
  'baseline_value',
] as const;
const OPTIONAL_COLUMNS = ['achievement_points', 'improvement_points', 'measure_weight'] as const;
export const MEASURE_FILE_COLUMNS: readonly string[] = [...REQUIRED_COLUMNS, ...OPTIONAL_COLUMNS];
type Column = (typeof REQUIRED_COLUMNS)[number] | (typeof OPTIONAL_COLUMNS)[number];

const TYPES: readonly MeasureType[] = ['OASIS', 'Claims', 'HHCAHPS'];
const COHORTS: readonly Cohort[] = ['larger', 'smaller'];
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;
/** Published points and weights: achievement 0-10, improvement 0-9 (42 CFR 484.360), a weight as a fraction. */
const PUBLISHED_RANGES = { achievement_points: [0, 10], improvement_points: [0, 9], measure_weight: [0, 1] } as const;

/** A row's cells by column, and the issues found while reading them. */
class RowReader {
  constructor(
    private readonly record: CsvRecord,
    private readonly columns: Map<Column, number>,
    readonly issues: FileIssue[],
  ) {}

  get row(): number {
    return this.record.line;
  }

  text(column: Column): string {
    const index = this.columns.get(column);
    return index === undefined ? '' : (this.record.fields[index] ?? '').trim();
  }

  get fieldCount(): number {
    return this.record.fields.length;
  }

  /** Records an issue of this row; undefined, for the caller to return. */
  refuse(column: Column | null, message: string): undefined {
    this.issues.push({ row: this.row, column, message });
    return undefined;
  }

  /** A decimal number within `range`; null when empty and `optional`, undefined (after an issue) when invalid. */
  number(column: Column, range: readonly [number, number], optional: boolean, hint = ''): number | null | undefined {
    const raw = this.text(column);
    if (raw === '') {
      if (!optional) this.refuse(column, 'a number is required');
      return optional ? null : undefined;
    }
    if (!DECIMAL.test(raw))
      return this.refuse(column, `"${raw}" is not a number (digits with an optional "." and sign)`);
    const value = Number(raw);
    if (value < range[0] || value > range[1])
      return this.refuse(column, `${raw} is out of range: ${range[0]} to ${range[1]}${hint}`);
    return value;
  }
}

function readHeader(record: CsvRecord, issues: FileIssue[]): Map<Column, number> {
  const columns = new Map<Column, number>();
  record.fields.forEach((raw, index) => {
    const name = raw.trim().toLowerCase();
    if (!MEASURE_FILE_COLUMNS.includes(name))
      issues.push({
        row: record.line,
        column: raw,
        message: `unknown column; the columns are ${MEASURE_FILE_COLUMNS.join(', ')}`,
      });
    else if (columns.has(name as Column))
      issues.push({ row: record.line, column: name, message: 'the column appears twice' });
    else columns.set(name as Column, index);
  });
  for (const column of REQUIRED_COLUMNS)
    if (!columns.has(column))
      issues.push({ row: record.line, column, message: 'required column missing from the header row' });
  return columns;
}

function readCohort(reader: RowReader, fileCohort: { value?: Cohort; row?: number }): Cohort | undefined {
  const raw = reader.text('cohort').toLowerCase();
  const cohort = COHORTS.find((c) => c === raw);
  if (!cohort) return reader.refuse('cohort', `"${raw}" is not a cohort: larger or smaller`);
  if (fileCohort.value === undefined) Object.assign(fileCohort, { value: cohort, row: reader.row });
  else if (fileCohort.value !== cohort)
    return reader.refuse(
      'cohort',
      `cohort mismatch: ${cohort} here, ${fileCohort.value} on row ${fileCohort.row}; one file holds one agency's cohort`,
    );
  return cohort;
}

function readMeasure(
  reader: RowReader,
  set: ScorableMeasureSet,
  seen: Map<string, number>,
): MeasureDefinition | undefined {
  const raw = reader.text('measure_id');
  const measure = set.measures.find((m) => m.id === raw.toUpperCase());
  if (!measure)
    return reader.refuse(
      'measure_id',
      `unknown measure "${raw}" for ${set.version}; its measures are ${set.measures.map((m) => m.id).join(', ')}`,
    );
  if (seen.has(measure.id))
    return reader.refuse('measure_id', `${measure.id} already appears on row ${seen.get(measure.id)}`);
  seen.set(measure.id, reader.row);
  if (reader.text('measure_name') === '') reader.refuse('measure_name', 'the measure name is required');
  const type = TYPES.find((t) => t.toLowerCase() === reader.text('measure_type').toLowerCase());
  if (type !== measure.type)
    reader.refuse(
      'measure_type',
      `${measure.id} is a ${measure.type} measure, not "${reader.text('measure_type')}" (OASIS, Claims or HHCAHPS)`,
    );
  return measure;
}

function readFigures(reader: RowReader, measure: MeasureDefinition): Omit<MeasureRow, 'row' | 'measureId'> | undefined {
  const range = measure.value_range;
  const figures = {
    agencyValue: reader.number('agency_value', range, true),
    achievementThreshold: reader.number('achievement_threshold', range, false),
    benchmark: reader.number('benchmark', range, false),
    baselineValue: reader.number('baseline_value', range, true),
    officialAchievementPoints: reader.number('achievement_points', PUBLISHED_RANGES.achievement_points, true),
    officialImprovementPoints: reader.number('improvement_points', PUBLISHED_RANGES.improvement_points, true),
    officialWeight: reader.number(
      'measure_weight',
      PUBLISHED_RANGES.measure_weight,
      true,
      ' (a fraction: 0.0600 for 6 %)',
    ),
  };
  if (Object.values(figures).includes(undefined)) return undefined;
  const { achievementThreshold: threshold, benchmark } = figures as { achievementThreshold: number; benchmark: number };
  const ordered = measure.direction === 'higher_is_better' ? benchmark >= threshold : benchmark <= threshold;
  if (!ordered) {
    const side = measure.direction === 'higher_is_better' ? 'at or above' : 'at or below';
    return reader.refuse(
      'benchmark',
      `${measure.id} is ${measure.direction.replaceAll('_', ' ')}: its benchmark must be ${side} the achievement threshold ${threshold}`,
    );
  }
  return figures as Omit<MeasureRow, 'row' | 'measureId'>;
}

function readRow(
  reader: RowReader,
  width: number,
  set: ScorableMeasureSet,
  state: { cohort: { value?: Cohort; row?: number }; seen: Map<string, number> },
): MeasureRow | undefined {
  const measure = readMeasure(reader, set, state.seen);
  if (reader.fieldCount !== width)
    return reader.refuse(null, `${reader.fieldCount} fields where the header row has ${width}`);
  const cohort = readCohort(reader, state.cohort);
  if (!measure) return undefined;
  if (cohort && measure.weight[cohort] === null)
    return reader.refuse(
      'cohort',
      `the ${cohort}-volume cohort is not scored on ${measure.type} measures; leave ${measure.id} out`,
    );
  const figures = readFigures(reader, measure);
  return figures && { row: reader.row, measureId: measure.id, ...figures };
}

/**
 * Validates a measure file against the year's measure set: every issue found, each naming its row and column, or
 * the rows when there is none. The file's cohort decides which measures it must hold (all of them, once each).
 */
export function readMeasureFile(text: string, set: ScorableMeasureSet): MeasureFileResult {
  let records: CsvRecord[];
  try {
    records = readCsv(text);
  } catch (err) {
    if (err instanceof CsvSyntaxError)
      return { ok: false, issues: [{ row: err.line, column: null, message: err.message.replace(/^line \d+: /, '') }] };
    throw err;
  }
  const [header, ...body] = records;
  if (!header)
    return {
      ok: false,
      issues: [
        {
          row: null,
          column: null,
          message: `the file is empty; a header row is required: ${REQUIRED_COLUMNS.join(',')}`,
        },
      ],
    };
  const issues: FileIssue[] = [];
  const columns = readHeader(header, issues);
  if (issues.length > 0) return { ok: false, issues };
  if (body.length === 0)
    return {
      ok: false,
      issues: [{ row: null, column: null, message: 'the file has a header row but no measure rows' }],
    };
  const state = { cohort: {} as { value?: Cohort; row?: number }, seen: new Map<string, number>() };
  const rows = body
    .map((record) => readRow(new RowReader(record, columns, issues), header.fields.length, set, state))
    .filter((row) => row !== undefined);
  const cohort = state.cohort.value;
  if (cohort) {
    const missing = cohortMeasures(set, cohort)
      .filter((m) => !state.seen.has(m.id))
      .map((m) => m.id);
    if (missing.length > 0)
      issues.push({
        row: null,
        column: 'measure_id',
        message: `missing measures of the ${cohort}-volume cohort for ${set.version}: ${missing.join(', ')}`,
      });
  }
  return issues.length > 0 || !cohort ? { ok: false, issues } : { ok: true, cohort, rows };
}
