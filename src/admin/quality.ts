import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import {
  AdminError,
  describe,
  integerOption,
  requiredOption,
  stringOption,
  unreadable,
  type Commands,
  type Options,
} from './command.js';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { HhvbpImportError, importHhvbpMeasures, type HhvbpImportInput } from '../resources/quality/hhvbp-import.js';
import { listImports } from '../resources/quality/hhvbp-repository.js';
import { asOperator, asOperatorOn, type OperatorCommand, type OperatorRunBy } from './operator-command.js';

const MEASURES: Omit<OperatorCommand, 'operation'> = { resourceType: 'quality_measure', phiMode: 'no_phi' };

function decimalOption(options: Options, name: string): number | undefined {
  const raw = stringOption(options, name);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value)) throw new AdminError(`--${name} must be a number, got "${raw}"`);
  return value;
}

async function readCsvFile(positionals: string[] = []): Promise<{ path: string; text: string }> {
  if (positionals.length !== 1) throw new AdminError('give exactly one CSV file after the options');
  const [path] = positionals;
  try {
    return { path, text: await readFile(path, 'utf8') };
  } catch (err) {
    throw unreadable(path, err);
  }
}

/**
 * Imports HHVBP measure figures into the agency as the operator command `quality import` runs it (one transaction with
 * its audit record; a refused file is a one-line AdminError and nothing is written): the CLI's operator, or a person of
 * the console.
 */
export function importMeasuresAs(db: Kysely<DB>, agencyId: string, by: OperatorRunBy, input: HhvbpImportInput) {
  return asOperatorOn(
    db,
    agencyId,
    { ...MEASURES, operation: 'importHhvbpMeasures', ...by },
    (store) => importHhvbpMeasures(store, input),
    { errors: [HhvbpImportError] },
  );
}

export const qualityCommands: Commands = {
  import: {
    usage:
      'quality import --agency ID --performance-year YEAR FILE.csv [--official-tps N --official-payment-adjustment P]   (HHVBP measure figures; replaces the year, keeps history)',
    options: {
      agency: { type: 'string' },
      'performance-year': { type: 'string' },
      'official-tps': { type: 'string' },
      'official-payment-adjustment': { type: 'string' },
    },
    positionals: true,
    async run(ctx) {
      const { options, positionals } = ctx;
      const agencyId = requiredOption(options, 'agency');
      const performanceYear = integerOption(options, 'performance-year', 2000);
      if (performanceYear === undefined) throw new AdminError('--performance-year is required');
      const file = await readCsvFile(positionals);
      const input = {
        performanceYear,
        csv: file.text,
        sourceFile: basename(file.path),
        officialTotalPerformanceScore: decimalOption(options, 'official-tps'),
        officialPaymentAdjustmentPercent: decimalOption(options, 'official-payment-adjustment'),
      };
      const result = await importMeasuresAs(ctx.db, agencyId, { outbox: ctx.outbox }, input);
      const json = {
        import_id: result.importId,
        agency_id: agencyId,
        performance_year: result.performanceYear,
        measure_set: result.measureSetVersion,
        cohort: result.cohort,
        measures: result.measures,
        superseded_import_id: result.supersededImportId,
      };
      return { json, text: `Imported HHVBP measures.\n${describe(json)}` };
    },
  },
  history: {
    usage: 'quality history --agency ID   (every HHVBP import, newest first; superseded ones too)',
    options: { agency: { type: 'string' } },
    async run(ctx) {
      const imports = (await asOperator(ctx, { ...MEASURES, operation: 'listHhvbpImports' }, listImports)).map(
        (row) => ({
          import_id: row.id,
          performance_year: row.performance_year,
          cohort: row.cohort,
          source_file: row.source_file,
          imported_at: row.created_at.toISOString(),
          superseded_at: row.superseded_at?.toISOString() ?? null,
        }),
      );
      const text = imports.length === 0 ? 'No HHVBP imports.' : imports.map((entry) => describe(entry)).join('\n\n');
      return { json: { imports }, text };
    },
  },
};
