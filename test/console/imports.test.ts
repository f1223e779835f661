/**
 * The console's imports as an administrator uses them: a real 835, a refused copy (its segment and line shown,
 * nothing written) and an HHVBP measure file, uploaded in Debian's headless Chromium; over HTTP, the roles, the form
 * tokens and the agency boundary of the results and the history.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { t } from 'tap';
import type { HeadlessPage } from '../helpers/chromium.js';
import { openHeadlessChromium } from '../helpers/chromium.js';
import {
  accessibilityViolations,
  keyboardWalk,
  formToken,
  httpSession,
  pageText,
  press,
  shot,
  signInAs,
  typeInto,
  type HttpSession,
  inBrowser,
  consoleTestbed,
} from '../helpers/console.js';
import { eraRowCounts, fixtureText } from '../helpers/era-files.js';

t.setTimeout(300_000);
const { server, db, agency, other } = await consoleTestbed(t);

const dir = mkdtempSync(join(tmpdir(), 'console-imports-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const MEASURES = [
  'measure_id,measure_name,measure_type,cohort,agency_value,achievement_threshold,benchmark,baseline_value',
  'DYSPNEA,Improvement in Dyspnea,OASIS,smaller,85,60,80,70',
  'ORAL_MEDS,Improvement in Management of Oral Medications,OASIS,smaller,70,60,80,65',
  'DC_FUNCTION,Discharge Function Score,OASIS,smaller,45,50,70,48',
  'PPH,Potentially Preventable Hospitalization,Claims,smaller,7.1,9.4,6.2,8.0',
  'DTC_PAC,Discharge to Community-Post Acute Care,Claims,smaller,55,40,60,30',
].join('\r\n');

const MEDICARE = fixtureText('medicare-home-health-crlf.835');
/**
 * Another payment (its own trace number) with its SE segment count off by one: refused at its last segment, after its
 * claims were read.
 */
const BROKEN = MEDICARE.replace('EFT202611040001', 'EFT202611049999').replace('SE*51*0001~', 'SE*52*0001~');

/** Posts a multipart form (a file and fields) as a browser does, with the form token of the imports page unless told. */
async function upload(
  session: HttpSession,
  path: string,
  file: { name: string; text: string },
  fields: Record<string, string> = {},
  withToken = true,
) {
  const form = new FormData();
  if (withToken) form.append('_csrf', formToken((await session.get('/console/imports')).body));
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append('file', new Blob([file.text]), file.name);
  const request = new Request('http://console.test', { method: 'POST', body: form });
  return server.app.inject({
    method: 'POST',
    url: path,
    headers: { cookie: session.cookie, 'content-type': request.headers.get('content-type')! },
    payload: Buffer.from(await request.arrayBuffer()),
  });
}

const hhvbpImports = (agencyId: string) =>
  db.selectFrom('hhvbp_imports').select('id').where('agency_id', '=', agencyId).execute();

t.test('a manager cannot import (403, nothing written) and sees no upload form', async (t) => {
  const manager = await httpSession(server, agency.manager);
  const page = await manager.get('/console/imports');
  t.equal(page.statusCode, 200);
  t.notMatch(page.body, /type="file"/);
  const era = await upload(manager, '/console/imports/era', { name: 'remit.835', text: MEDICARE });
  t.equal(era.statusCode, 403);
  const hhvbp = await upload(
    manager,
    '/console/imports/hhvbp',
    { name: 'py.csv', text: MEASURES },
    { performance_year: '2025' },
  );
  t.equal(hhvbp.statusCode, 403);
  t.same(Object.values(await eraRowCounts(db, agency.agencyId)), [0, 0, 0, 0]);
  t.same(await hhvbpImports(agency.agencyId), []);
});

t.test('an upload without the form token is 403 and writes nothing', async (t) => {
  const administrator = await httpSession(server, agency.administrator);
  const res = await upload(administrator, '/console/imports/era', { name: 'remit.835', text: MEDICARE }, {}, false);
  t.equal(res.statusCode, 403);
  t.same(Object.values(await eraRowCounts(db, agency.agencyId)), [0, 0, 0, 0]);
});

t.test('form refusals say what is missing', async (t) => {
  const administrator = await httpSession(server, agency.administrator);
  const noYear = await upload(administrator, '/console/imports/hhvbp', { name: 'py.csv', text: MEASURES });
  t.equal(noYear.statusCode, 400);
  t.match(noYear.body, /The performance year must be a year/);
  const badTps = await upload(
    administrator,
    '/console/imports/hhvbp',
    { name: 'py.csv', text: MEASURES },
    { performance_year: '2025', official_tps: 'lots' },
  );
  t.equal(badTps.statusCode, 400);
  t.match(badTps.body, /The official total performance score must be a number/);
  t.match(badTps.body, /value="2025"/, 'what was typed is kept');
  const outOfRange = await upload(
    administrator,
    '/console/imports/hhvbp',
    { name: 'bad.csv', text: MEASURES.replace(',55,', ',155,') },
    { performance_year: '2025' },
  );
  t.equal(outOfRange.statusCode, 422, 'the importer’s refusal');
  t.match(
    outOfRange.body,
    /bad\.csv was not imported \(nothing was written\):\n {2}row 6, column agency_value: 155 is out of range/,
  );
  t.same(await hhvbpImports(agency.agencyId), []);
});

/** Chooses `path` in the file input `selector`, as a person picking it in the file dialog would. */
async function chooseFile(page: HeadlessPage, selector: string, path: string) {
  const { root } = await page.send('DOM.getDocument');
  const { nodeId } = await page.send('DOM.querySelector', { nodeId: root.nodeId, selector });
  await page.send('DOM.setFileInputFiles', { nodeId, files: [path] });
}

const eraForm = `document.querySelector('form[action="/console/imports/era"]')`;
const hhvbpForm = `document.querySelector('form[action="/console/imports/hhvbp"]')`;

t.test(
  'in a browser: an administrator imports an 835, is refused a broken copy with nothing written, imports HHVBP measures',
  inBrowser,
  async (t) => {
    const page = await openHeadlessChromium(t);
    await signInAs(page, server.base, agency.administrator);
    await page.navigate(`${server.base}/console/imports`);
    t.match(await pageText(page), /The import runs to its end before the page answers/);
    t.same(await accessibilityViolations(page), [], 'imports: no serious or critical axe violation');
    const walk = await keyboardWalk(page);
    t.same(walk.reached, walk.inPageOrder, 'Tab reaches everything, in page order');
    await shot(page, 'imports');

    const good = join(dir, 'medicare-home-health.835');
    writeFileSync(good, MEDICARE);
    await chooseFile(page, '#era_file', good);
    await press(page, 'Import the 835', eraForm);
    const result = await pageText(page);
    t.match(result, /Imported\. This is what the file held\./);
    t.match(result, /File\s+medicare-home-health\.835/);
    const counts = await eraRowCounts(db, agency.agencyId);
    const file = await db
      .selectFrom('era_files')
      .selectAll()
      .where('agency_id', '=', agency.agencyId)
      .executeTakeFirstOrThrow();
    t.match(result, new RegExp(`Payments\\s+${file.payment_count}\\s+Claims\\s+${file.claim_count}`));
    t.equal(counts.remittance_allocations, file.claim_count);
    const audit = await db
      .selectFrom('audit_events')
      .select('details')
      .where('agency_id', '=', agency.agencyId)
      .where('operation_id', '=', 'importEraFile')
      .execute();
    t.match(audit, [{ details: { actor: `user:${agency.administrator.userId}` } }], 'imported as the person');
    t.same(await accessibilityViolations(page), [], '835 result: no serious or critical axe violation');
    await shot(page, 'imports-era-result');

    const broken = join(dir, 'broken-copy.835');
    writeFileSync(broken, BROKEN);
    await page.navigate(`${server.base}/console/imports`);
    await chooseFile(page, '#era_file', broken);
    await press(page, 'Import the 835', eraForm);
    const refusal = await pageText(page);
    t.match(refusal, /broken-copy\.835 was not imported \(nothing was written\): segment 53 \(SE\*52\*0001\), line 53/);
    t.same(await eraRowCounts(db, agency.agencyId), counts, 'nothing of the broken copy was written');
    t.same(await accessibilityViolations(page), [], 'refusal: no serious or critical axe violation');
    await shot(page, 'imports-era-refused');

    const measures = join(dir, 'py2025.csv');
    writeFileSync(measures, MEASURES);
    await typeInto(page, 'Performance year (2023, 2024, 2025)', '2025');
    await chooseFile(page, '#hhvbp_file', measures);
    await typeInto(page, 'Official total performance score (optional, 0 to 100)', '48.125');
    await press(page, 'Import the measures', hhvbpForm);
    const imported = await pageText(page);
    t.match(imported, /Imported the HHVBP measures/);
    t.match(imported, /Performance year\s+2025/);
    t.match(imported, /Cohort\s+smaller/);
    t.match(imported, /DYSPNEA/);
    t.equal((await hhvbpImports(agency.agencyId)).length, 1);
    t.same(await accessibilityViolations(page), [], 'HHVBP result: no serious or critical axe violation');
    await shot(page, 'imports-hhvbp-result');

    await page.navigate(`${server.base}/console/imports`);
    const history = await pageText(page);
    t.match(history, /medicare-home-health\.835/);
    t.notMatch(history, /broken-copy/, 'a refused file is not in the history');
    t.match(history, /py2025\.csv/);
    await shot(page, 'imports-history');
  },
);

t.test('the same 835 again adds nothing and says so', async (t) => {
  const administrator = await httpSession(server, agency.administrator);
  const before = await eraRowCounts(db, agency.agencyId);
  const res = await upload(administrator, '/console/imports/era', { name: 'again.835', text: MEDICARE });
  t.equal(res.statusCode, 303);
  t.match(res.headers.location, /^\/console\/imports\/era\/[\w-]+\?done=already_imported$/);
  t.match((await administrator.get(String(res.headers.location))).body, /This very file was imported before/);
  t.same(await eraRowCounts(db, agency.agencyId), before);
});

t.test('a person of another agency never sees the imports: 404 for their results, not in the history', async (t) => {
  const outsider = await httpSession(server, other.administrator);
  const file = await db
    .selectFrom('era_files')
    .select('id')
    .where('agency_id', '=', agency.agencyId)
    .executeTakeFirstOrThrow();
  const measures = await db
    .selectFrom('hhvbp_imports')
    .select('id')
    .where('agency_id', '=', agency.agencyId)
    .executeTakeFirstOrThrow();
  t.equal((await outsider.get(`/console/imports/era/${file.id}`)).statusCode, 404);
  t.equal((await outsider.get(`/console/imports/hhvbp/${measures.id}`)).statusCode, 404);
  const history = await outsider.get('/console/imports');
  t.equal(history.statusCode, 200);
  t.notMatch(history.body, new RegExp(`${file.id}|${measures.id}|medicare-home-health|py2025`));
  t.match(history.body, /No 835 file has been imported/);
  const staff = await httpSession(server, agency.staff);
  t.match((await staff.get('/console/imports')).body, /medicare-home-health\.835/, 'the agency’s own staff read it');
});
