import type { CommandStore } from '../../db/tenant-store.js';
import { randomId } from '../../shared/ids.js';
import { readMeasureFile, type FileIssue } from '../../domain/hhvbp/measure-file.js';
import {
  cohortMeasures,
  measureSetFor,
  supportedPerformanceYears,
  type Cohort,
} from '../../domain/hhvbp/measure-sets.js';
import { replaceImport } from './hhvbp-repository.js';

export interface HhvbpImportInput {
  performanceYear: number;
  /** The CSV file's text. */
  csv: string;
  /** Its name, kept with the import's history. */
  sourceFile: string;
  /** The Annual Performance Report's totals, when it is out. */
  officialTotalPerformanceScore?: number;
  officialPaymentAdjustmentPercent?: number;
}

interface HhvbpImportResult {
  importId: string;
  supersededImportId: string | null;
  performanceYear: number;
  measureSetVersion: string;
  cohort: Cohort;
  measures: number;
}

/** A refused import: nothing was written. `issues` name the row and column of each problem in the file. */
export class HhvbpImportError extends Error {
  constructor(
    message: string,
    readonly issues: readonly FileIssue[] = [],
  ) {
    super(message);
    this.name = 'HhvbpImportError';
  }
}

const SHOWN_ISSUES = 50;

function describeIssues(issues: readonly FileIssue[]): string {
  const lines = issues
    .slice(0, SHOWN_ISSUES)
    .map(
      (issue) =>
        `  ${[issue.row === null ? 'file' : `row ${issue.row}`, issue.column && `column ${issue.column}`].filter(Boolean).join(', ')}: ${issue.message}`,
    );
  if (issues.length > SHOWN_ISSUES) lines.push(`  and ${issues.length - SHOWN_ISSUES} more`);
  return lines.join('\n');
}

function checkOfficial(name: string, value: number | undefined, bound: [number, number]): number | null {
  if (value === undefined) return null;
  if (!Number.isFinite(value) || value < bound[0] || value > bound[1])
    throw new HhvbpImportError(`${name} must be a number from ${bound[0]} to ${bound[1]}, got ${value}`);
  return value;
}

/**
 * Validates a measure file against the year's measure set and makes it the store's agency's current import of the
 * year, in its command: refused as a whole (HhvbpImportError) or written as a whole. The admin command and the demo
 * seed both run it through runPlatformCommand.
 */
export async function importHhvbpMeasures(store: CommandStore, input: HhvbpImportInput): Promise<HhvbpImportResult> {
  const lookup = measureSetFor(input.performanceYear);
  if (!lookup.found) {
    const why = lookup.reason === 'not_encoded' ? ` (${lookup.detail})` : '';
    throw new HhvbpImportError(
      `no measure set for performance year ${input.performanceYear}${why}; supported years: ${supportedPerformanceYears().join(', ')}`,
    );
  }
  const { set } = lookup;
  const applicable = set.exchange_function.applicable_percent;
  const officialTps = checkOfficial('the official TPS', input.officialTotalPerformanceScore, [0, 100]);
  const officialAdjustment = checkOfficial(
    'the official payment adjustment percent',
    input.officialPaymentAdjustmentPercent,
    [-applicable, applicable],
  );
  const file = readMeasureFile(input.csv, set);
  if (!file.ok)
    throw new HhvbpImportError(
      `${input.sourceFile} was not imported (nothing was written):\n${describeIssues(file.issues)}`,
      file.issues,
    );
  const importId = randomId('hvi_', 12);
  const { supersededId } = await replaceImport(store, {
    id: importId,
    performanceYear: input.performanceYear,
    measureSetId: set.id,
    cohort: file.cohort,
    officialTotalPerformanceScore: officialTps,
    officialPaymentAdjustmentPercent: officialAdjustment,
    sourceFile: input.sourceFile,
    rows: file.rows,
  });
  return {
    importId,
    supersededImportId: supersededId,
    performanceYear: input.performanceYear,
    measureSetVersion: set.version,
    cohort: file.cohort,
    measures: cohortMeasures(set, file.cohort).length,
  };
}
