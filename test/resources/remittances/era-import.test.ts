import t, { type Test } from 'tap';
import { testDatabase } from '../../helpers/database.js';
import { createTestIntegration } from '../../helpers/identity.js';
import { EraImportError } from '../../../src/resources/remittances/era-import.js';
import { eraRowCounts, fixtureText, importText } from '../../helpers/era-files.js';

const { db } = await testDatabase();
const NOTHING = { era_files: 0, remittances: 0, remittance_allocations: 0, remittance_provider_adjustments: 0 };
const MEDICARE = fixtureText('medicare-home-health-crlf.835');
const SECONDARY = fixtureText('secondary-payer-checks-no-breaks.835');

const freshAgency = async () => (await createTestIntegration(db)).agencyId;

async function refused(t: Test, text: string, message: RegExp): Promise<void> {
  const agencyId = await freshAgency();
  const error = await importText(db, agencyId, 'bad.835', text).then(
    () => null,
    (err: unknown) => err,
  );
  t.type(error, EraImportError);
  t.match((error as Error).message, /^bad\.835 was not imported \(nothing was written\): /);
  t.match((error as Error).message, message);
  t.same(await eraRowCounts(db, agencyId), NOTHING, 'nothing of the file was loaded');
}

t.test('our fixtures import whole; the same file again adds nothing', async (t) => {
  const agencyId = await freshAgency();
  const first = await importText(db, agencyId, 'medicare.835', MEDICARE);
  t.match(first, {
    outcome: 'imported',
    payments: 1,
    claims: 5,
    providerAdjustments: 2,
    matches: { matched: 0, partially_matched: 0, unmatched: 5 },
  });
  const counts = await eraRowCounts(db, agencyId);
  t.same(counts, { era_files: 1, remittances: 1, remittance_allocations: 5, remittance_provider_adjustments: 2 });
  const again = await importText(db, agencyId, 'renamed.835', MEDICARE);
  t.same(
    again,
    { outcome: 'already_imported', eraFileId: first.eraFileId, fileName: 'medicare.835', payments: 1, claims: 5 },
    'recognized by content, whatever its name',
  );
  t.same(await eraRowCounts(db, agencyId), counts);
  t.match(await importText(db, agencyId, 'secondary.835', SECONDARY), { outcome: 'imported', payments: 2, claims: 2 });
  t.match(await importText(db, agencyId, 'recoupment.835', fixtureText('recoupment-only.835')), {
    outcome: 'imported',
    payments: 1,
    claims: 0,
    providerAdjustments: 1,
  });
  t.match(
    await importText(db, await freshAgency(), 'medicare.835', MEDICARE),
    { outcome: 'imported' },
    'another agency imports the same file for itself',
  );
});

t.test('the same payer and trace number from a different file is refused as a duplicate', async (t) => {
  const agencyId = await freshAgency();
  const first = await importText(db, agencyId, 'medicare.835', MEDICARE);
  const before = await eraRowCounts(db, agencyId);
  const other = MEDICARE.replace('DTM*405*20261102', 'DTM*405*20261103');
  const error = await importText(db, agencyId, 'resent.835', other).then(
    () => null,
    (err: unknown) => err as Error,
  );
  t.match(
    error?.message,
    new RegExp(
      `resent\\.835 was not imported \\(nothing was written\\): segment 3 \\(ST\\*835\\*0001\\), line 3: duplicate payment: payer 1111111111 trace number EFT202611040001 was already imported from medicare\\.835 \\(era_file_id ${first.eraFileId}, imported `,
    ),
  );
  t.same(await eraRowCounts(db, agencyId), before);
  const twice = SECONDARY.replace('TRN*1*0048211938', 'TRN*1*0048211937');
  await refused(
    t,
    twice,
    /segment 22 \(ST\*835\*1002\), line 1: duplicate payment: payer 1620345678 trace number 0048211937 was already imported earlier in this same file/,
  );
});

t.test('malformed files are refused with the segment, its position and line, and nothing is loaded', async (t) => {
  await refused(
    t,
    MEDICARE.replace('*00501*', '*0501**'),
    /segment 1 \(ISA\*00\*.*\), line 1: bad ISA: ISA has 16 elements of fixed width; 17 were found before position 105/,
  );
  await refused(t, MEDICARE.replace(/SE\*\d+\*0001~\r\n/, ''), /GE is out of order here/);
  await refused(t, MEDICARE.replace(/GE\*1\*4721~\r\n/, ''), /IEA is out of order here: expected ST or GE/);
  await refused(
    t,
    MEDICARE.replace(/IEA\*1\*000004721~\r\n/, ''),
    /segment 54 \(GE\), line 54: the file ends early after this segment: interchange ISA has no IEA/,
  );
  await refused(
    t,
    MEDICARE.replace(/SE\*(\d+)\*0001/, (_, n) => `SE*${Number(n) + 1}*0001`),
    /segment 53 \(SE\*52\*0001\), line 53: SE01 says 52 segments from ST to SE; there are 51/,
  );
  await refused(
    t,
    MEDICARE.replace('N1*PR*PALMETTO', 'N1*PE*PALMETTO'),
    /segment 7 \(N1\*PE\*PALMETTO GBA HHH MAC\*XV\*11001\), line 7: the first N1 of an 835 is the payer, N1\*PR; this one is N1\*PE/,
  );
  await refused(
    t,
    MEDICARE.replace('LX*1~\r\n', ''),
    /segment 15 \(CLP\*M0100001-261001.*\), line 15: CLP is out of order here: expected N3, N4, REF, LX, PLB or SE/,
  );
  await refused(
    t,
    MEDICARE.slice(0, MEDICARE.indexOf('CLP*M0100003') + 20),
    /segment 36 \(CLP\), line 36: the file ends inside a segment \(truncated\): "CLP\*M0100003-261003\*"/,
  );
  await refused(
    t,
    MEDICARE.replace('CLP*M0100003-261003*4*1850.00*0.00', 'CLP*M0100003-261003*4*1850.00'),
    /segment 36 \(CLP\*M0100003-261003\*4\*1850\.00\*\*MA.*\), line 36: CLP04 "" is not an amount/,
  );
  await refused(
    t,
    MEDICARE.replace('*760.00*240.00*', '*76O.00*240.00*'),
    /segment 22 \(CLP\*M0100002-261002.*\), line 22: CLP04 "76O\.00" is not an amount/,
  );
  await refused(
    t,
    MEDICARE.replace('DTM*233*20261017', 'DTM*233*20261317'),
    /segment 25 \(DTM\*233\*20261317\), line 25: DTM02 "20261317" is not a date \(CCYYMMDD\)/,
  );
  await refused(
    t,
    MEDICARE.replace('BPR*I*2678.34', 'BPR*I*2678.43'),
    /segment 4 \(BPR\*I\*2678\.43.*\), line 4: the payment does not balance: BPR02 is 2678\.43 but the claims paid 2916\.00 \(sum of CLP04\) less 237\.66 .* is 2678\.34/,
  );
  await refused(t, 'hello', /bad ISA: an X12 file begins with the ISA segment/);
});

t.test(
  'a character the database cannot store is refused by the parser, at its segment and line, not by the database',
  async (t) => {
    const nul = MEDICARE.replace('CLP*M0100002-261002', 'CLP*M0100002-26\u00001002');
    await refused(
      t,
      nul,
      /: segment 22 \(CLP\*M0100002-26\uFFFD1002\*.*\), line 22: CLP01 holds U\+0000 \(a NUL byte\), which is not text: the file is damaged or not X12$/,
    );
    const surrogate = MEDICARE.replace('N1*PR*PALMETTO', 'N1*PR*PALMETTO\uD800');
    await refused(
      t,
      surrogate,
      /: segment 7 \(N1\*PR\*PALMETTO\uFFFD GBA.*\), line 7: N102 holds U\+D800 \(an unpaired UTF-16 surrogate\), which is not text/,
    );
  },
);

t.test('a file refused in its second payment leaves nothing of the first, already written', async (t) => {
  await refused(
    t,
    SECONDARY.replace('CAS*PI*45*360.00', 'CAS*PI*45*36O.00'),
    /segment 35 \(CAS\*PI\*45\*36O\.00\), line 1: CAS03 "36O\.00" is not an amount/,
  );
});
