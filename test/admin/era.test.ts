import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AdminError, type Command, type Options } from '../../src/admin/command.js';
import { eraCommands } from '../../src/admin/era.js';
import { loadConfig } from '../../src/config.js';
import { webhookOutbox } from '../../src/events/outbox.js';
import { testDatabase } from '../helpers/database.js';
import { createTestIntegration } from '../helpers/identity.js';
import { testKeyEncryption } from '../helpers/secrets.js';

/** The era commands in-process on the test database (cli.test.ts runs the real script), with the CLI's outbox. */
const { db } = await testDatabase();
const config = loadConfig({});
const run = (command: Command, options: Options, positionals: string[] = []) =>
  command.run({ db, config, options, positionals, keyEncryption: () => testKeyEncryption, outbox: webhookOutbox });

t.test(
  "era import: an audit record of the operator's import, naming the file and its payments, committed with them",
  async (t) => {
    const { agencyId } = await createTestIntegration(db);
    const imported = await run(eraCommands.import, { agency: agencyId }, [
      fixture('secondary-payer-checks-no-breaks.835'),
    ]);
    const audit = await db
      .selectFrom('audit_events')
      .selectAll()
      .where('agency_id', '=', agencyId)
      .where('operation_id', '=', 'importEraFile')
      .execute();
    const remittances = await db
      .selectFrom('remittances')
      .select('id')
      .where('agency_id', '=', agencyId)
      .orderBy('id')
      .execute();
    t.equal(audit.length, 1);
    t.match(audit[0], {
      extension_id: 'platform',
      resource_type: 'remittance',
      outcome: 'success',
      phi_mode: 'phi',
      details: { actor: 'admin-cli' },
    });
    t.equal(audit[0].resource_ids[0], imported.json.era_file_id, 'the file first');
    t.same(
      [...audit[0].resource_ids.slice(1)].sort(),
      remittances.map((row) => row.id),
      'then its payments',
    );
    await t.rejects(run(eraCommands.import, { agency: agencyId }, ['/nonexistent.835']));
    t.equal(
      (
        await db
          .selectFrom('audit_events')
          .select('id')
          .where('agency_id', '=', agencyId)
          .where('operation_id', '=', 'importEraFile')
          .execute()
      ).length,
      1,
      'a refused import writes nothing',
    );
  },
);
const fixture = (name: string) => join(import.meta.dirname, '../fixtures/era', name);

t.test("era import: the file's counts and match results; era files lists it", async (t) => {
  const { agencyId } = await createTestIntegration(db);
  const imported = await run(eraCommands.import, { agency: agencyId }, [
    fixture('secondary-payer-checks-no-breaks.835'),
  ]);
  t.match(imported.json, {
    outcome: 'imported',
    agency_id: agencyId,
    payments: 2,
    claims: 2,
    provider_adjustments: 0,
    matched: 0,
    partially_matched: 0,
    unmatched: 2,
  });
  t.match(imported.text, /^Imported the ERA file\.\noutcome: +imported\n/);
  const files = await run(eraCommands.files, { agency: agencyId });
  t.match(files.json, {
    files: [
      {
        era_file_id: imported.json.era_file_id,
        file_name: 'secondary-payer-checks-no-breaks.835',
        interchange_control_number: '000000318',
        payments: 2,
        claims: 2,
      },
    ],
  });
});

t.test('era import refusals are one line', async (t) => {
  const { agencyId } = await createTestIntegration(db);
  await t.rejects(
    run(eraCommands.import, { agency: agencyId }, []),
    new AdminError('give exactly one 835 file after the options'),
  );
  await t.rejects(
    run(eraCommands.import, { agency: agencyId }, ['/nonexistent.835']),
    new AdminError('cannot read /nonexistent.835: ENOENT'),
  );
  await t.rejects(
    run(eraCommands.import, {}, [fixture('recoupment-only.835')]),
    new AdminError('--agency is required'),
  );
  await t.rejects(
    run(eraCommands.import, { agency: 'no-such-agency' }, [fixture('recoupment-only.835')]),
    new AdminError('agency "no-such-agency" does not exist'),
  );
  t.same((await run(eraCommands.files, { agency: agencyId })).json, { files: [] });
});

t.test(
  'era import: a NUL byte in the file is refused at its segment and line, before the database sees it',
  async (t) => {
    const { agencyId } = await createTestIntegration(db);
    const dir = t.testdir({
      'nul.835': readFileSync(fixture('recoupment-only.835'), 'utf8').replace('N1*PE*', 'N1*PE*\u0000'),
    });
    const error = await run(eraCommands.import, { agency: agencyId }, [join(dir, 'nul.835')]).then(
      () => null,
      (err: unknown) => err,
    );
    t.type(error, AdminError);
    t.match(
      (error as Error).message,
      /^nul\.835 was not imported \(nothing was written\): segment 10 \(N1\*PE\*\uFFFDACME HOME HEALTH\*XX\*1234567893\), line 10: N102 holds U\+0000 \(a NUL byte\), which is not text: the file is damaged or not X12$/,
    );
    t.same((await run(eraCommands.files, { agency: agencyId })).json, { files: [] });
  },
);
