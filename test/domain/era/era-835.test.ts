import t from 'tap';
import { readFileSync } from 'node:fs';
import { Era835Reader, type EraClaim, type EraEvent, type PaymentTotals } from '../../../src/domain/era/era-835.js';
import { SegmentReader, X12Error } from '../../../src/domain/era/x12-segments.js';

const ISA = 'ISA*00*          *00*          *ZZ*PAYER          *ZZ*AGENCY         *261102*0930*^*00501*000000001*0*P*:';
const HEADER = [
  'BPR*I*{amount}*C*ACH*CCP*01*011000015*DA*123*1111111111**01*021000021*DA*987*20261104',
  'TRN*1*EFT1*1111111111',
  'DTM*405*20261102',
  'N1*PR*MEDICARE MAC*XV*11001',
  'N1*PE*ACME HOME HEALTH*XX*1234567893',
];

/** An 835 with one transaction of `body` after the payee, its BPR02 `amount`, and correct counts. */
function file(body: string[], amount = '0.00', header = HEADER): string {
  const transaction = ['ST*835*0001', ...header.map((s) => s.replace('{amount}', amount)), ...body];
  transaction.push(`SE*${transaction.length + 1}*0001`);
  return `${[ISA, 'GS*HP*PAYER*AGENCY*20261102*0930*1*X*005010X221A1', ...transaction, 'GE*1*1', 'IEA*1*000000001'].join('~\n')}~\n`;
}

function read(text: string): EraEvent[] {
  const segments = new SegmentReader();
  const all = segments.push(text);
  segments.end();
  const reader = new Era835Reader(segments.delimiters!);
  const events = all.flatMap((segment) => reader.accept(segment));
  reader.end(all.at(-1) ?? null);
  return events;
}

const claims = (events: EraEvent[]) => events.flatMap((e) => (e.type === 'claim' ? [e.claim] : []));
const totals = (events: EraEvent[]) =>
  events.flatMap((e) => (e.type === 'payment-end' ? [e.totals] : []))[0] as PaymentTotals;
const cents = (claim: EraClaim) => ({
  charged: claim.chargedCents,
  paid: claim.paidCents,
  adjusted: claim.adjustmentCents,
  allowed: claim.allowedCents,
  pr: claim.patientResponsibilityCents,
  variance: claim.varianceCents,
});

t.test('header, payer and payee: one payment event before the claims', async (t) => {
  const events = read(file(['LX*1', 'CLP*M1*1*100.00*80.00**MA*PCN1', 'CAS*CO*45*20.00'], '80.00'));
  t.same(
    events.map((e) => e.type),
    ['interchange', 'payment', 'claim', 'payment-end'],
  );
  t.match(events[1], {
    payment: {
      transactionControlNumber: '0001',
      creditDebit: 'C',
      amountCents: 8000,
      method: 'ACH',
      paymentDate: '2026-11-04',
      traceNumber: 'EFT1',
      traceOriginator: '1111111111',
      productionDate: '2026-11-02',
      payer: { name: 'MEDICARE MAC', id: '11001' },
      payee: { name: 'ACME HOME HEALTH', id: '1234567893' },
      index: 3,
      line: 3,
    },
  });
  t.same(events[0], {
    type: 'interchange',
    interchange: { controlNumber: '000000001', senderId: 'PAYER', receiverId: 'AGENCY' },
  });
});

t.test('CLP and claim-level CAS: CO-45 contractual and CO-253 sequestration (Medicare home health)', async (t) => {
  const [claim] = claims(
    read(
      file(
        [
          'LX*1',
          'CLP*M0100001-261001*1*3150.00*2058.00**MA*2226001*32*1',
          'CAS*CO*45*1050.00**253*42.00',
          'DTM*232*20261001',
          'DTM*233*20261030',
        ],
        '2058.00',
      ),
    ),
  );
  t.same(
    cents(claim),
    { charged: 315000, paid: 205800, adjusted: 109200, allowed: 210000, pr: 0, variance: 0 },
    'allowed is charged less CO-45, not less sequestration',
  );
  t.same(claim.adjustments, [
    { group: 'CO', reason: '45', amountCents: 105000 },
    { group: 'CO', reason: '253', amountCents: 4200 },
  ]);
  t.match(claim, {
    patientControlNumber: 'M0100001-261001',
    statusCode: '1',
    status: 'processed_as_primary',
    filingIndicator: 'MA',
    payerClaimNumber: '2226001',
    serviceDateFrom: '2026-10-01',
    serviceDateTo: '2026-10-30',
  });
});

t.test(
  'SVC lines: their CAS fold into the claim, PR-1/2/3 are patient responsibility, AMT*B6 sums to allowed',
  async (t) => {
    const body = [
      'LX*1',
      'CLP*M2*1*1200.00*760.00**MA*PCN2',
      'NM1*QC*1*OKAFOR*SAMUEL****MI*2FK7RT3PA19',
      'SVC*HC:G0299*700.00*460.00**5',
      'DTM*472*20261003',
      'CAS*CO*45*100.00',
      'CAS*PR*1*100.00**2*40.00',
      'AMT*B6*600.00',
      'SVC*HC:G0151*500.00*300.00**4',
      'DTM*472*20261017',
      'CAS*CO*45*100.00',
      'CAS*PR*3*100.00',
      'AMT*B6*400.00',
    ];
    const [claim] = claims(read(file(body, '760.00')));
    t.same(
      cents(claim),
      { charged: 120000, paid: 76000, adjusted: 44000, allowed: 100000, pr: 24000, variance: 0 },
      'PR summed when CLP05 is empty',
    );
    t.same(
      claim.adjustments.map((a) => [`${a.group}-${a.reason}`, a.amountCents]),
      [
        ['CO-45', 20000],
        ['PR-1', 10000],
        ['PR-2', 4000],
        ['PR-3', 10000],
      ],
      'CO-45 of both lines summed',
    );
    t.same(
      [claim.serviceDateFrom, claim.serviceDateTo],
      ['2026-10-03', '2026-10-17'],
      'without DTM*232/233, the span of the service dates',
    );
    t.same(claim.patient, { lastName: 'OKAFOR', firstName: 'SAMUEL', middleName: null, memberId: '2FK7RT3PA19' });
  },
);

t.test(
  'AMT*AU is the allowed amount when present; CLP05 is patient responsibility when present; NM1*IL gives the member id',
  async (t) => {
    const [claim] = claims(
      read(
        file(
          [
            'LX*1',
            'CLP*M3*2*751.50*310.00*220.00*12*PCN3',
            'CAS*OA*23*221.50',
            'CAS*PR*1*220.00',
            'NM1*QC*1*BAKI*ANGI',
            'NM1*IL*1*BAKI*OMAR****MI*SUB123',
            'AMT*AU*530.00',
          ],
          '310.00',
        ),
      ),
    );
    t.same(cents(claim), { charged: 75150, paid: 31000, adjusted: 44150, allowed: 53000, pr: 22000, variance: 0 });
    t.equal(claim.patient.memberId, 'SUB123');
  },
);

t.test('a denial (CLP02 4), and a variance when adjustments do not account for the charge', async (t) => {
  const [denied, short] = claims(
    read(
      file(
        [
          'LX*1',
          'CLP*M4*4*1850.00*0.00**MA*PCN4',
          'CAS*CO*50*1850.00',
          'CLP*M5*1*500.00*300.00**MA*PCN5',
          'CAS*CO*45*150.00',
        ],
        '300.00',
      ),
    ),
  );
  t.match(denied, { status: 'denied', allowedCents: 0, varianceCents: 0 });
  t.equal(short.varianceCents, 5000, '500.00 - 300.00 - 150.00');
});

t.test('a reversal (CLP02 22, group CR) and its correction are linked to the original claim number', async (t) => {
  const body = [
    'LX*1',
    'CLP*M6*22*-2400.00*-1568.00**MA*ORIG1',
    'CAS*CR*45*-800.00**253*-32.00',
    'CLP*M6*1*2400.00*1666.00**MA*NEW1',
    'CAS*CO*45*700.00**253*34.00',
    'CLP*M7*1*100.00*100.00**MA*NEW2',
    'REF*F8*ORIG2',
  ];
  const [reversal, correction, corrected] = claims(read(file(body, '198.00')));
  t.match(reversal, {
    status: 'reversal_of_previous_payment',
    originalPayerClaimNumber: 'ORIG1',
    varianceCents: 0,
    adjustments: [
      { group: 'CR', reason: '45', amountCents: -80000 },
      { group: 'CR', reason: '253', amountCents: -3200 },
    ],
  });
  t.match(
    correction,
    { status: 'processed_as_primary', originalPayerClaimNumber: 'ORIG1', payerClaimNumber: 'NEW1' },
    'follows the reversal of the same claim',
  );
  t.equal(corrected.originalPayerClaimNumber, 'ORIG2', 'REF*F8');
});

t.test('PLB: provider-level adjustments and the balance BPR02 = sum of CLP04 - sum of PLB', async (t) => {
  const body = [
    'LX*1',
    'CLP*M8*1*100.00*80.00**MA*P8',
    'CAS*CO*45*20.00',
    'PLB*1234567893*20261231*L6:P8*-12.34*WO:OLD9*250.00',
    'PLB*1234567893*20261231*FB*5.00',
  ];
  const events = read(
    file(
      body,
      '-162.66'.replace('-', ''),
      HEADER.map((s) => s.replace('*C*ACH', '*D*ACH')),
    ),
  );
  const end = events.at(-1)!;
  t.match(end, {
    type: 'payment-end',
    providerAdjustments: [
      {
        position: 1,
        providerId: '1234567893',
        fiscalPeriodDate: '2026-12-31',
        reasonCode: 'L6',
        reference: 'P8',
        amountCents: -1234,
      },
      { position: 2, reasonCode: 'WO', reference: 'OLD9', amountCents: 25000 },
      { position: 3, reasonCode: 'FB', reference: null, amountCents: 500 },
    ],
  });
  t.match(
    totals(events),
    { claimCount: 1, paidCents: 8000, providerAdjustmentCents: 24266 },
    'a debit of 162.66: 80.00 - 242.66',
  );
  t.throws(
    () =>
      read(
        file(
          body,
          '162.67',
          HEADER.map((s) => s.replace('*C*ACH', '*D*ACH')),
        ),
      ),
    /segment 4 \(BPR\*I\*162\.67\*D.*\), line 4: the payment does not balance: BPR02 is -162\.67 but the claims paid 80\.00 \(sum of CLP04\) less 242\.66 of provider-level adjustments \(sum of PLB amounts\) is -162\.66/,
  );
});

t.test('a payment with only provider-level adjustments has no claims', async (t) => {
  const events = read(
    file(
      ['PLB*1234567893*20261231*WO:X*150.00'],
      '150.00',
      HEADER.map((s) => s.replace('*C*ACH', '*D*ACH')),
    ),
  );
  t.same(
    events.map((e) => e.type),
    ['interchange', 'payment', 'payment-end'],
  );
  t.equal(totals(events).claimCount, 0);
});

t.test('BPR16 missing: the production date (the TR3 check examples put the date in BPR15)', async (t) => {
  const header = ['BPR*I*80.00*C*CHK***********20050318', ...HEADER.slice(1)];
  t.match(read(file(['LX*1', 'CLP*M1*1*100.00*80.00**MA*P', 'CAS*CO*45*20.00'], '80.00', header))[1], {
    payment: { paymentDate: '2026-11-02', method: 'CHK' },
  });
});

t.test('envelope checks: counts and control numbers of SE, GE and IEA', async (t) => {
  const good = file(['LX*1', 'CLP*M1*1*100.00*80.00**MA*P', 'CAS*CO*45*20.00'], '80.00');
  t.match(good, /SE\*10\*0001/);
  t.throws(
    () => read(good.replace('SE*10*0001', 'SE*11*0001')),
    /segment 12 \(SE\*11\*0001\), line 12: SE01 says 11 segments from ST to SE; there are 10/,
  );
  t.throws(() => read(good.replace('SE*10*0001', 'SE*10*0002')), /SE02 control number 0002 does not match ST02 0001/);
  t.throws(() => read(good.replace('GE*1*1', 'GE*2*1')), /GE01 says 2 transaction sets \(ST\); there are 1/);
  t.throws(
    () => read(good.replace('IEA*1*000000001', 'IEA*1*000000002')),
    /IEA02 control number 000000002 does not match ISA13 000000001/,
  );
  t.throws(() => read(good.replace('SE*10*0001~\n', '')), /GE is out of order here: expected a 2100 segment/);
  t.throws(
    () => read(good.replace('GE*1*1~\nIEA*1*000000001~\n', '')),
    /segment 12 \(SE\), line 12: the file ends early after this segment: functional group GS has no GE \(missing SE, GE or IEA\)/,
  );
  t.throws(
    () => read(good.replace('IEA*1*000000001~\n', '')),
    /the file ends early after this segment: interchange ISA has no IEA/,
  );
  t.throws(
    () => read(good.replace('*005010X221A1', '*004010X091A1')),
    /GS08 is version 004010X091A1; the importer reads 005010X221A1/,
  );
  t.throws(() => read(good.replace('ST*835', 'ST*837')), /this is a 837 transaction set; only 835/);
});

t.test('segment order and values are checked where they are read, naming the segment, position and line', async (t) => {
  const refused = (body: string[], pattern: RegExp, amount = '80.00') => {
    const error = t.throws(() => read(file(body, amount)), pattern) as X12Error;
    t.type(error, X12Error);
  };
  refused(
    ['CLP*M1*1*100.00*80.00**MA*P'],
    /segment 9 \(CLP\*M1.*\), line 9: CLP is out of order here: expected N3, N4, REF, LX, PLB or SE/,
  );
  refused(['LX*1', 'CLP*M1*1*100.00*8O.00**MA*P'], /segment 10 .*CLP04 "8O\.00" is not an amount/);
  refused(['LX*1', 'CLP*M1*1*100.00'], /CLP04 "" is not an amount/, '0.00');
  refused(['LX*1', 'CLP*M1*1*100.00*80.00**MA*P', 'DTM*232*20260231'], /DTM02 "20260231" is not a date \(CCYYMMDD\)/);
  refused(['LX*1', 'CLP*M1*9*100.00*80.00**MA*P'], /CLP02 "9" is not a claim status code/);
  refused(
    ['LX*1', 'CLP*M1*1*100.00*80.00**MA*P', 'CAS*XX*45*20.00'],
    /CAS01 "XX" is not a claim adjustment group code/,
  );
  refused(['LX*1', 'CLP*M1*1*100.00*80.00**MA*P', 'N1*PR*AGAIN'], /N1 is out of order here/);
  refused(['LX*1', 'LX*2'], /LX is out of order here: expected TS3, TS2 or CLP/);
  refused(['LX*1'], /LX has no claim \(CLP\) before SE/);
  refused(['LX*1', 'CLP*M1*1*100.00*80.123**MA*P'], /CLP04 "80\.123" is not an amount/);
  t.throws(
    () => read(file([], '0.00', [HEADER[1], HEADER[0], ...HEADER.slice(2)])),
    /TRN is out of order here: an 835 begins with BPR/,
  );
  t.throws(() => read(file([], '0.00', [HEADER[0], ...HEADER.slice(2)])), /the 835 header has no TRN/);
  t.throws(
    () => read(file([], '0.00', [...HEADER.slice(0, 3), HEADER[4], HEADER[3]])),
    /the first N1 of an 835 is the payer, N1\*PR; this one is N1\*PE/,
  );
});

t.test('our fixture files read whole: totals of the Medicare home health payment', async (t) => {
  const events = read(
    readFileSync(new URL('../../fixtures/era/medicare-home-health-crlf.835', import.meta.url), 'utf8'),
  );
  t.same(totals(events), {
    claimCount: 5,
    chargedCents: 620000,
    allowedCents: 320000,
    paidCents: 291600,
    adjustmentCents: 328400,
    patientResponsibilityCents: 24000,
    varianceCents: 0,
    byGroup: { CO: 387600, CR: -83200, OA: 0, PI: 0, PR: 24000 },
    providerAdjustmentCents: 23766,
  });
  const secondary = read(
    readFileSync(new URL('../../fixtures/era/secondary-payer-checks-no-breaks.835', import.meta.url), 'utf8'),
  );
  t.same(secondary.filter((e) => e.type === 'payment').length, 2, 'two ST/SE payments in one group');
});
