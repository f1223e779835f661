import t from 'tap';
import { buildTestApp, signIn, type SignedInApi } from '../../helpers/app.js';
import { testDatabase } from '../../helpers/database.js';
import {
  HhvbpImportError,
  importHhvbpMeasures,
  type HhvbpImportInput,
} from '../../../src/resources/quality/hhvbp-import.js';
import { runPlatformCommand } from '../../../src/platform-commands/platform-command.js';

const { db } = await testDatabase();
const api = await buildTestApp();

const HEADER =
  'measure_id,measure_name,measure_type,cohort,agency_value,achievement_threshold,benchmark,baseline_value,achievement_points,improvement_points,measure_weight';
/** The smaller-volume PY2025 cycle of the scoring test's worked example: modeled TPS 50.956, adjustment 0.096. */
const PY2025_SMALLER = [
  HEADER,
  'DYSPNEA,Improvement in Dyspnea,OASIS,smaller,85,60,80,70,,,',
  'ORAL_MEDS,Improvement in Management of Oral Medications,OASIS,smaller,70,60,80,65,,,',
  'DC_FUNCTION,Discharge Function Score,OASIS,smaller,45,50,70,48,,,',
  'PPH,Potentially Preventable Hospitalization,Claims,smaller,7.1,9.4,6.2,8.0,,,',
  'DTC_PAC,Discharge to Community-Post Acute Care,Claims,smaller,55,40,60,30,,,',
].join('\n');

function importFile(agencyId: string, input: Partial<HhvbpImportInput> = {}) {
  const command = {
    agencyId,
    operation: 'importHhvbpMeasures',
    actor: 'admin-cli',
    resourceType: 'quality_measure',
    phiMode: 'no_phi',
    outbox: undefined,
  } as const;
  return runPlatformCommand(db, command, (store) =>
    importHhvbpMeasures(store, { performanceYear: 2025, csv: PY2025_SMALLER, sourceFile: 'py2025.csv', ...input }),
  );
}

const get = (signed: SignedInApi, route: 'summary' | 'measures', query: string) =>
  signed.request({ method: 'GET', url: `/api/v1/ext/quality/hhvbp/${route}?${query}` });

t.test(
  'getHhvbpSummary: the cycle summary, modeled values beside the official ones and the statement that they are a diagnostic',
  async (t) => {
    const signed = await signIn(api);
    await importFile(signed.integration.agencyId);
    const res = await get(signed, 'summary', 'performance_year=2025');
    t.equal(res.statusCode, 200);
    t.match(res.json().data, {
      performance_year: 2025,
      payment_year: 2027,
      cohort: 'smaller_volume',
      measure_set_version: 'PY2025, CMS-1780-F',
      measure_count: 5,
      scorable_measure_count: 5,
      official_regulator_total_performance_score: null,
      official_regulator_payment_adjustment_percent: null,
      official_regulator_unavailable_reason: 'report_not_yet_published',
      modeled_total_performance_score: 50.956,
      modeled_payment_adjustment_percent: 0.096,
      modeled_unavailable_reason: null,
      modeled_exchange_function_slope: 2,
      modeled_statement: /a diagnostic, not a determination/,
      modeled_as_of: String,
    });
    t.equal(
      (await get(signed, 'summary', 'performance_year=2025&payment_year=2027')).statusCode,
      200,
      'the right payment year is accepted',
    );
  },
);

t.test(
  'listHhvbpMeasures: one row per measure of the cohort, official points when published, modeled points always',
  async (t) => {
    const signed = await signIn(api);
    const published = PY2025_SMALLER.replace('7.1,9.4,6.2,8.0,,,', '7.1,9.4,6.2,8.0,6.969,4.5,0.37143').replace(
      '45,50,70,48,,,',
      '45,50,70,48,0,0,0.28571',
    );
    await importFile(signed.integration.agencyId, { csv: published });
    const res = await get(signed, 'measures', 'performance_year=2025');
    t.equal(res.statusCode, 200);
    const rows = res.json().data;
    t.same(
      rows.map((r: { measure_id: string }) => r.measure_id),
      ['DYSPNEA', 'ORAL_MEDS', 'DC_FUNCTION', 'PPH', 'DTC_PAC'],
    );
    t.same(rows[3], {
      measure_id: 'PPH',
      name: 'Home Health Within-Stay Potentially Preventable Hospitalization',
      category: 'claims',
      direction: 'lower_is_better',
      weight: 0.37143,
      modeled_agency_value: 7.1,
      achievement_threshold: 9.4,
      benchmark: 6.2,
      baseline_value: 8,
      official_regulator_score: 6.969,
      official_regulator_achievement_points: 6.969,
      official_regulator_improvement_points: 4.5,
      official_regulator_weight: 0.37143,
      official_regulator_unavailable_reason: null,
      modeled_score: 6.969,
      modeled_achievement_points: 6.969,
      modeled_improvement_points: 4.5,
      modeled_weight: 0.37143,
      modeled_unscorable_reason: null,
    });
    t.match(
      rows[0],
      { official_regulator_score: null, official_regulator_unavailable_reason: 'insufficient_data', modeled_score: 10 },
      'the report is out but gives this measure no points',
    );
    const summary = (await get(signed, 'summary', 'performance_year=2025')).json().data;
    t.equal(
      summary.official_regulator_unavailable_reason,
      'insufficient_data',
      'two published measures: fewer than 5, no official TPS',
    );
  },
);

t.test('official totals imported with the report are served as published', async (t) => {
  const signed = await signIn(api);
  await importFile(signed.integration.agencyId, {
    officialTotalPerformanceScore: 48.125,
    officialPaymentAdjustmentPercent: -0.412,
  });
  t.match((await get(signed, 'summary', 'performance_year=2025')).json().data, {
    official_regulator_total_performance_score: 48.125,
    official_regulator_payment_adjustment_percent: -0.412,
    official_regulator_unavailable_reason: null,
    modeled_total_performance_score: 50.956,
  });
  const only = await signIn(api);
  await importFile(only.integration.agencyId, { officialTotalPerformanceScore: 48.125 });
  t.equal(
    (await get(only, 'summary', 'performance_year=2025')).json().data.official_regulator_unavailable_reason,
    'official_totals_not_imported',
  );
});

t.test(
  'a measure below the minimum data: no modeled points, fewer than 5 scorable measures: no modeled TPS',
  async (t) => {
    const signed = await signIn(api);
    await importFile(signed.integration.agencyId, { csv: PY2025_SMALLER.replace('85,60,80,70', ',60,80,70') });
    const summary = (await get(signed, 'summary', 'performance_year=2025')).json().data;
    t.match(summary, {
      scorable_measure_count: 4,
      modeled_total_performance_score: null,
      modeled_payment_adjustment_percent: null,
      modeled_unavailable_reason: 'insufficient_data',
    });
    const dyspnea = (await get(signed, 'measures', 'performance_year=2025')).json().data[0];
    t.match(dyspnea, {
      modeled_agency_value: null,
      modeled_score: null,
      modeled_unscorable_reason: 'below_minimum_data_performance_year',
      modeled_weight: null,
    });
  },
);

t.test('payment_year is performance_year + 2 and nothing else; performance_year is required', async (t) => {
  const signed = await signIn(api);
  await importFile(signed.integration.agencyId);
  for (const route of ['summary', 'measures'] as const) {
    const wrong = await get(signed, route, 'performance_year=2025&payment_year=2026');
    t.equal(wrong.statusCode, 400);
    t.match(wrong.json().error, {
      code: 'PLATFORM_INVALID_INPUT',
      message: /adjusts payments in 2027: send payment_year=2027/,
      details: { field: 'payment_year', expected: 2027 },
    });
    t.equal((await get(signed, route, 'payment_year=2027')).statusCode, 400, 'performance_year missing');
  }
});

t.test(
  'a year not imported: 404 with the reason and the recovery step; a year without a measure set: 404 naming the supported years',
  async (t) => {
    const signed = await signIn(api);
    const agencyId = signed.integration.agencyId;
    for (const route of ['summary', 'measures'] as const) {
      const missing = await get(signed, route, 'performance_year=2024');
      t.equal(missing.statusCode, 404);
      t.match(missing.json().error, {
        code: 'PLATFORM_RESOURCE_NOT_FOUND',
        message: /has not been imported for this agency/,
        details: {
          reason: 'measure_set_not_imported',
          performance_year: 2024,
          recovery: `npm run -s admin -- quality import --agency ${agencyId} --performance-year 2024 FILE.csv`,
        },
      });
      const unknown = await get(signed, route, 'performance_year=2030');
      t.equal(unknown.statusCode, 404);
      t.match(unknown.json().error, {
        message: /supported years: 2023, 2024, 2025/,
        details: { reason: 'performance_year_not_supported', supported_years: '2023, 2024, 2025' },
      });
      t.match((await get(signed, route, 'performance_year=2026')).json().error, {
        message: /PY2026 weights .* could not be confirmed/,
        details: { reason: 'performance_year_not_supported' },
      });
    }
  },
);

t.test("agency isolation: one agency never sees another agency's import", async (t) => {
  const mine = await signIn(api);
  const theirs = await signIn(api);
  await importFile(theirs.integration.agencyId);
  const res = await get(mine, 'summary', 'performance_year=2025');
  t.equal(res.statusCode, 404);
  t.match(res.json().error.details, { reason: 'measure_set_not_imported' });
  await importFile(mine.integration.agencyId, { csv: PY2025_SMALLER.replace('45,50,70,48', '65,50,70,48') });
  t.not(
    (await get(mine, 'summary', 'performance_year=2025')).json().data.modeled_total_performance_score,
    50.956,
    'its own figures',
  );
  t.equal(
    (await get(theirs, 'summary', 'performance_year=2025')).json().data.modeled_total_performance_score,
    50.956,
    'theirs unchanged',
  );
});

t.test('no_phi sessions read both routes as is: agency aggregates, no patient data', async (t) => {
  const phi = await signIn(api, { phiMode: 'phi' });
  await importFile(phi.integration.agencyId);
  const noPhi = await signIn(api, { phiMode: 'no_phi', integration: { agencyId: phi.integration.agencyId } });
  for (const route of ['summary', 'measures'] as const) {
    const a = await get(phi, route, 'performance_year=2025');
    const b = await get(noPhi, route, 'performance_year=2025');
    t.equal(b.statusCode, 200);
    t.same(b.json().data, a.json().data, `${route}: the same in both modes`);
  }
});

t.test('a re-import replaces the year atomically and keeps the previous import', async (t) => {
  const signed = await signIn(api);
  const agencyId = signed.integration.agencyId;
  const first = await importFile(agencyId);
  const second = await importFile(agencyId, { csv: PY2025_SMALLER.replace('45,50,70,48', '65,50,70,48') });
  t.equal(second.supersededImportId, first.importId);
  const imports = await db
    .selectFrom('hhvbp_imports')
    .select(['id', 'superseded_at'])
    .where('agency_id', '=', agencyId)
    .orderBy('created_at')
    .execute();
  t.same(
    imports.map((i) => [i.id, i.superseded_at !== null]),
    [
      [first.importId, true],
      [second.importId, false],
    ],
  );
  const kept = await db
    .selectFrom('hhvbp_measure_results')
    .select('measure_id')
    .where('agency_id', '=', agencyId)
    .where('import_id', '=', first.importId)
    .execute();
  t.equal(kept.length, 5, 'the superseded import keeps its rows');
  // DC_FUNCTION now 65: achievement 9 x 15/20 + 0.5 = 7.25; improvement 10 x 17/22 - 0.5 = 7.227: care 7.25.
  const rows = (await get(signed, 'measures', 'performance_year=2025')).json().data;
  t.equal(rows[2].modeled_score, 7.25);
});

t.test('a refused import writes nothing and leaves the current import in place', async (t) => {
  const signed = await signIn(api);
  const agencyId = signed.integration.agencyId;
  const current = await importFile(agencyId);
  const broken = PY2025_SMALLER.replace('PPH,', 'PPX,').replace('55,40,60,30', '55,40,60,thirty');
  const err = await importFile(agencyId, { csv: broken }).catch((e: unknown) => e);
  t.ok(err instanceof HhvbpImportError);
  t.match(
    (err as HhvbpImportError).message,
    /py2025\.csv was not imported \(nothing was written\):\n {2}row 5, column measure_id: unknown measure "PPX"[^\n]*\n {2}row 6, column baseline_value: "thirty" is not a number/,
  );
  t.same(
    (err as HhvbpImportError).issues.map((i) => [i.row, i.column]),
    [
      [5, 'measure_id'],
      [6, 'baseline_value'],
      [null, 'measure_id'],
    ],
  );
  const imports = await db
    .selectFrom('hhvbp_imports')
    .select('id')
    .where('agency_id', '=', agencyId)
    .where('superseded_at', 'is', null)
    .execute();
  t.same(
    imports.map((i) => i.id),
    [current.importId],
  );
  t.equal((await db.selectFrom('hhvbp_imports').select('id').where('agency_id', '=', agencyId).execute()).length, 1);
  await t.rejects(
    importFile(agencyId, { performanceYear: 2026 }),
    /no measure set for performance year 2026 .*supported years: 2023, 2024, 2025/,
  );
  await t.rejects(importFile(agencyId, { officialPaymentAdjustmentPercent: 7 }), /from -5 to 5, got 7/);
  await t.rejects(importFile('no-such-agency'), /agency "no-such-agency" does not exist/);
});
