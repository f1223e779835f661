import { PlatformError } from '../../shared/platform-error.js';
import type { Handler, RequestContext } from '../handler.js';
import { measureSetFor, PAYMENT_YEAR_OFFSET, supportedPerformanceYears } from '../../domain/hhvbp/measure-sets.js';
import { scoreCycle } from '../../domain/hhvbp/scoring.js';
import { findCurrentImport, listMeasureResults } from './hhvbp-repository.js';
import { hhvbpMeasureViews, hhvbpSummaryView, type HhvbpCycle } from './hhvbp-view.js';

type CycleQuery = RequestContext<'getHhvbpSummary'>['query'];

/** The payment year is the performance year + 2, and only that. */
function paymentYearOf(query: CycleQuery): number {
  const expected = query.performance_year + PAYMENT_YEAR_OFFSET;
  if (query.payment_year !== undefined && query.payment_year !== expected) {
    throw new PlatformError(
      'PLATFORM_INVALID_INPUT',
      `performance year ${query.performance_year} adjusts payments in ${expected}: send payment_year=${expected} or leave it out.`,
      { field: 'payment_year', expected },
    );
  }
  return expected;
}

function notSupported(year: number, detail: string | undefined): PlatformError {
  const years = supportedPerformanceYears().join(', ');
  return new PlatformError(
    'PLATFORM_RESOURCE_NOT_FOUND',
    `The service has no HHVBP measure set for performance year ${year}${detail ? ` (${detail})` : ''}; supported years: ${years}.`,
    {
      reason: 'performance_year_not_supported',
      performance_year: year,
      supported_years: years,
    },
  );
}

/** A measure set not imported is a 404 with the reason, and the step that fixes it. */
function notImported(agencyId: string, year: number): PlatformError {
  const recovery = `npm run -s admin -- quality import --agency ${agencyId} --performance-year ${year} FILE.csv`;
  return new PlatformError(
    'PLATFORM_RESOURCE_NOT_FOUND',
    `The HHVBP measure set of performance year ${year} has not been imported for this agency. An agency administrator imports the year's figures with: ${recovery}`,
    { reason: 'measure_set_not_imported', performance_year: year, recovery },
  );
}

async function loadCycle(ctx: Pick<RequestContext<'getHhvbpSummary'>, 'query' | 'store'>): Promise<HhvbpCycle> {
  const { query, store } = ctx;
  const paymentYear = paymentYearOf(query);
  const lookup = measureSetFor(query.performance_year);
  if (!lookup.found) throw notSupported(query.performance_year, lookup.detail);
  const imported = await findCurrentImport(store, query.performance_year);
  if (!imported) throw notImported(store.agencyId, query.performance_year);
  const rows = await listMeasureResults(store, imported.id);
  const figures = rows.map((row) => ({
    measureId: row.measure_id,
    agencyValue: row.agency_value === null ? null : Number(row.agency_value),
    achievementThreshold: Number(row.achievement_threshold),
    benchmark: Number(row.benchmark),
    baselineValue: row.baseline_value === null ? null : Number(row.baseline_value),
  }));
  return { set: lookup.set, imported, rows, paymentYear, score: scoreCycle(lookup.set, imported.cohort, figures) };
}

export const getHhvbpSummary: Handler<'getHhvbpSummary'> = async (ctx) => ({
  data: hhvbpSummaryView(await loadCycle(ctx)),
});

export const listHhvbpMeasures: Handler<'listHhvbpMeasures'> = async (ctx) => ({
  data: hhvbpMeasureViews(await loadCycle(ctx)),
});
