import type { Transaction } from 'kysely';
import type { DB } from '../db/schema.js';
import type { CommandStore, EventOutbox } from '../db/tenant-store.js';
import { runPlatformCommand } from '../platform-commands/platform-command.js';
import { importHhvbpMeasures } from '../resources/quality/hhvbp-import.js';
import {
  cohortMeasures,
  measureSetFor,
  type Cohort,
  type MeasureDefinition,
  type ScorableMeasureSet,
} from '../domain/hhvbp/measure-sets.js';
import { MEASURE_FILE_COLUMNS } from '../domain/hhvbp/measure-file.js';
import {
  paymentAdjustmentPercent,
  roundHalfAwayFromZero,
  scoreCycle,
  type MeasureFigures,
} from '../domain/hhvbp/scoring.js';
import { Random } from './random.js';

/** A closed year whose (fictional) Annual Performance Report is out, and the year in progress. */
const PUBLISHED_YEAR = 2024;
const OPEN_YEAR = 2025;
/** Fictional: the demo's "published" adjustments use another slope than the model's assumption, as the real one would be. */
const DEMO_NATIONAL_SLOPE = 1.85;
/** The large demo agency is in the larger-volume cohort, the small one (a few hundred patients) in the smaller. */
const COHORT = { large: 'larger', small: 'smaller' } as const satisfies Record<string, Cohort>;
type DemoSize = keyof typeof COHORT;

const thousandths = (rng: Random, min: number, max: number) =>
  rng.int(Math.round(min * 1000), Math.round(max * 1000)) / 1000;
/** A percentage as a report prints it: within 0-100, three decimals. */
const clamp = (value: number) => roundHalfAwayFromZero(Math.min(100, Math.max(0, value)));

/** Plausible figures: the threshold is the cohort median, the benchmark the top decile, the agency near them. */
function demoFigures(rng: Random, measure: MeasureDefinition): MeasureFigures {
  const lowerIsBetter = measure.direction === 'lower_is_better';
  const threshold = lowerIsBetter ? thousandths(rng, 6, 16) : thousandths(rng, 45, 80);
  const gap = thousandths(rng, lowerIsBetter ? 2 : 8, lowerIsBetter ? 5 : 18);
  const benchmark = clamp(lowerIsBetter ? threshold - gap : threshold + gap);
  const agencyValue = rng.chance(0.1)
    ? null
    : clamp(threshold + (lowerIsBetter ? -1 : 1) * thousandths(rng, -0.6 * gap, 1.2 * gap));
  const baselineValue =
    agencyValue === null
      ? null
      : clamp(agencyValue + (lowerIsBetter ? 1 : -1) * thousandths(rng, -0.3 * gap, 0.5 * gap));
  return { measureId: measure.id, agencyValue, achievementThreshold: threshold, benchmark, baselineValue };
}

const cell = (value: number | string | null) =>
  value === null ? '' : typeof value === 'number' ? String(value) : `"${value.replaceAll('"', '""')}"`;

/** The CSV an agency administrator would import: the published columns filled in when the report is out. */
function demoCsv(set: ScorableMeasureSet, cohort: Cohort, figures: MeasureFigures[], published: boolean): string {
  const scored = scoreCycle(set, cohort, figures);
  const lines = cohortMeasures(set, cohort).map((measure, index) => {
    const f = figures[index];
    const score = scored.measures[index];
    const official = published
      ? [score.achievementPoints, score.improvementPoints, score.redistributedWeight]
      : [null, null, null];
    return [
      measure.id,
      measure.name,
      measure.type,
      cohort,
      f.agencyValue,
      f.achievementThreshold,
      f.benchmark,
      f.baselineValue,
      ...official,
    ]
      .map(cell)
      .join(',');
  });
  return `${[MEASURE_FILE_COLUMNS.join(','), ...lines].join('\r\n')}\r\n`;
}

async function importDemoYear(store: CommandStore, size: DemoSize, year: number, published: boolean): Promise<void> {
  const lookup = measureSetFor(year);
  if (!lookup.found) throw new Error(`the demo's HHVBP year ${year} has no measure set`);
  const cohort = COHORT[size];
  const rng = new Random(`demo-hhvbp:${size}:${year}`);
  const figures = cohortMeasures(lookup.set, cohort).map((measure) => demoFigures(rng, measure));
  const tps = scoreCycle(lookup.set, cohort, figures).totalPerformanceScore;
  const totals =
    published && tps !== null
      ? {
          officialTotalPerformanceScore: tps,
          officialPaymentAdjustmentPercent: paymentAdjustmentPercent(tps, {
            ...lookup.set.exchange_function,
            assumed_slope: DEMO_NATIONAL_SLOPE,
          }),
        }
      : {};
  const csv = demoCsv(lookup.set, cohort, figures, published);
  await importHhvbpMeasures(store, { performanceYear: year, csv, sourceFile: `demo-hhvbp-py${year}.csv`, ...totals });
}

/** Two HHVBP years through the admin import's own path: one with the (fictional) report published, one without. */
export async function seedHhvbp(
  trx: Transaction<DB>,
  agencyId: string,
  size: DemoSize,
  outbox: EventOutbox | undefined,
): Promise<void> {
  const command = {
    agencyId,
    operation: 'seedDemoHhvbp',
    actor: 'demo-seed',
    resourceType: 'quality_measure',
    phiMode: 'no_phi',
    outbox,
  } as const;
  await runPlatformCommand(trx, command, async (store) => {
    await importDemoYear(store, size, PUBLISHED_YEAR, true);
    await importDemoYear(store, size, OPEN_YEAR, false);
  });
}
