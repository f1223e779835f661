import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { agencyCommands } from '../../src/admin/agency.js';
import { AdminError, type Command, type Options } from '../../src/admin/command.js';
import { qualityCommands } from '../../src/admin/quality.js';
import { loadConfig } from '../../src/config.js';
import { testDatabase } from '../helpers/database.js';
import { createTestIntegration } from '../helpers/identity.js';
import { testKeyEncryption } from '../helpers/secrets.js';

/** The quality commands in-process on the test database (cli.test.ts runs the real script with a file). */
const { db } = await testDatabase();
const config = loadConfig({});
const run = (command: Command, options: Options, positionals: string[] = []) =>
  command.run({ db, config, options, positionals, keyEncryption: () => testKeyEncryption });

async function refusal(command: Command, options: Options, positionals: string[] = []): Promise<string> {
  try {
    await run(command, options, positionals);
    return 'accepted';
  } catch (err) {
    if (!(err instanceof AdminError)) throw err;
    return err.message;
  }
}

const dir = mkdtempSync(join(tmpdir(), 'quality-import-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

function csvFile(name: string, rows: string[]): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    [
      'measure_id,measure_name,measure_type,cohort,agency_value,achievement_threshold,benchmark,baseline_value',
      ...rows,
    ].join('\r\n'),
  );
  return path;
}
const SMALLER = [
  'DYSPNEA,Improvement in Dyspnea,OASIS,smaller,85,60,80,70',
  'ORAL_MEDS,Improvement in Management of Oral Medications,OASIS,smaller,70,60,80,65',
  'DC_FUNCTION,Discharge Function Score,OASIS,smaller,45,50,70,48',
  'PPH,Potentially Preventable Hospitalization,Claims,smaller,7.1,9.4,6.2,8.0',
  'DTC_PAC,Discharge to Community-Post Acute Care,Claims,smaller,55,40,60,30',
];
const agency = 'quality-agency';
await run(agencyCommands.create, { id: agency, name: 'North Shore Home Care', 'service-zips': '01970' });

t.test('quality import: validated, atomic, replacing the year and keeping history', async (t) => {
  const good = csvFile('py2025.csv', SMALLER);
  const first = await run(qualityCommands.import, { agency, 'performance-year': '2025' }, [good]);
  t.match(first.json, {
    import_id: /^hvi_/,
    agency_id: agency,
    performance_year: 2025,
    measure_set: 'PY2025, CMS-1780-F',
    cohort: 'smaller',
    measures: 5,
    superseded_import_id: null,
  });
  t.match(first.text, /Imported HHVBP measures\.\nimport_id: +hvi_/);
  const second = await run(
    qualityCommands.import,
    { agency, 'performance-year': '2025', 'official-tps': '48.125', 'official-payment-adjustment': '-0.412' },
    [good],
  );
  t.equal(second.json.superseded_import_id, first.json.import_id);
  const { json } = await run(qualityCommands.history, { agency });
  t.match(json.imports, [
    {
      import_id: second.json.import_id,
      performance_year: 2025,
      cohort: 'smaller',
      source_file: 'py2025.csv',
      superseded_at: null,
    },
    { import_id: first.json.import_id, superseded_at: String },
  ]);
});

t.test('quality import refusals name the row and the column, and leave nothing behind', async (t) => {
  const before = await db.selectFrom('hhvbp_imports').select('id').where('agency_id', '=', agency).execute();
  const bad = csvFile('bad.csv', [
    ...SMALLER.slice(0, 3),
    'PPH,Potentially Preventable Hospitalization,Claims,larger,7.1,9.4,6.2,8.0',
    SMALLER[4].replace(',55,', ',155,'),
  ]);
  t.equal(
    await refusal(qualityCommands.import, { agency, 'performance-year': '2025' }, [bad]),
    "bad.csv was not imported (nothing was written):\n  row 5, column cohort: cohort mismatch: larger here, smaller on row 2; one file holds one agency's cohort\n  row 6, column agency_value: 155 is out of range: 0 to 100",
  );
  t.same(await db.selectFrom('hhvbp_imports').select('id').where('agency_id', '=', agency).execute(), before);
  t.match(
    await refusal(qualityCommands.import, { agency, 'performance-year': '2030' }, [bad]),
    /^no measure set for performance year 2030; supported years: 2023, 2024, 2025$/,
  );
  t.equal(
    await refusal(qualityCommands.import, { agency, 'performance-year': '2025' }, []),
    'give exactly one CSV file after the options',
  );
  t.equal(
    await refusal(qualityCommands.import, { agency, 'performance-year': '2025' }, [join(dir, 'nope.csv')]),
    `cannot read ${join(dir, 'nope.csv')}: ENOENT`,
  );
  t.equal(await refusal(qualityCommands.import, { agency }, [bad]), '--performance-year is required');
  t.equal(
    await refusal(qualityCommands.import, { agency, 'performance-year': '2025', 'official-tps': 'high' }, [bad]),
    '--official-tps must be a number, got "high"',
  );
  t.equal(
    await refusal(qualityCommands.import, { agency: 'nobody', 'performance-year': '2025' }, [
      csvFile('ok.csv', SMALLER),
    ]),
    'agency "nobody" does not exist',
  );
});

t.test("quality import: an audit record of the operator's import, naming it", async (t) => {
  // A fixture agency: agency create leaves an audit record of its own.
  await createTestIntegration(db, { agencyId: 'audited-quality' });
  const imported = await run(qualityCommands.import, { agency: 'audited-quality', 'performance-year': '2025' }, [
    csvFile('audited.csv', SMALLER),
  ]);
  const audit = await db.selectFrom('audit_events').selectAll().where('agency_id', '=', 'audited-quality').execute();
  t.equal(audit.length, 1);
  t.match(audit[0], {
    extension_id: 'platform',
    operation_id: 'importHhvbpMeasures',
    resource_type: 'quality_measure',
    resource_ids: [imported.json.import_id],
    outcome: 'success',
    phi_mode: 'no_phi',
    details: { actor: 'admin-cli' },
  });
});
