import t from 'tap';
import { buildTestApp, signIn, type SignedInApi } from '../../helpers/app.js';
import { seededAgency } from '../../helpers/clinical.js';
import { testDatabase } from '../../helpers/database.js';
import { listPage, walkList } from '../../helpers/list-walk.js';
import { eraText, fixtureText, importText } from '../../helpers/era-files.js';

const { db } = await testDatabase();
const api = await buildTestApp();
const { agencyId, phi, noPhi } = await seededAgency(api);

const medicare = await importText(db, agencyId, 'medicare.835', fixtureText('medicare-home-health-crlf.835'));
const secondary = await importText(db, agencyId, 'secondary.835', fixtureText('secondary-payer-checks-no-breaks.835'));
const recoupment = await importText(db, agencyId, 'recoupment.835', fixtureText('recoupment-only.835'));

const REMITTANCES = '/api/v1/ext/remittances';
const allocationsUrl = (id: string) => `${REMITTANCES}/${id}/allocations`;
const remittanceOf = async (eraFileId: string, session: SignedInApi = phi) =>
  (await listPage(session, REMITTANCES, { era_file_id: eraFileId })).data;

t.test("listRemittances: a file's payments as imported, check numbers masked to the last 4 characters", async (t) => {
  const [payment] = await remittanceOf(medicare.eraFileId);
  t.match(payment, {
    id: /^rem_/,
    era_file_id: medicare.eraFileId,
    payer_name: 'PALMETTO GBA HHH MAC',
    payer_id: '11001',
    payee_name: 'ACME HOME HEALTH',
    payee_id: '1234567893',
    payment_amount: '2678.34',
    credit_debit: 'credit',
    payment_method: 'ACH',
    payment_date: '2026-11-04',
    check_or_eft_number: '****0001',
    status: 'received',
    claim_count: 5,
    paid_amount: '2916.00',
    provider_adjustment_amount: '237.66',
    received_at: String,
  });
  const [debit] = await remittanceOf(recoupment.eraFileId);
  t.match(debit, {
    payment_amount: '150.00',
    credit_debit: 'debit',
    claim_count: 0,
    paid_amount: '0.00',
    provider_adjustment_amount: '150.00',
  });
  const checks = await remittanceOf(secondary.eraFileId);
  t.same(
    checks
      .map((p: { check_or_eft_number: string; payment_method: string }) => [p.payment_method, p.check_or_eft_number])
      .sort(),
    [
      ['CHK', '****1937'],
      ['CHK', '****1938'],
    ],
    'same payment date: in id order',
  );
});

t.test(
  'listRemittances: newest payment first, filtered by status and era_file_id, offset and cursor pages agree',
  async (t) => {
    const all = (await listPage(phi, REMITTANCES, { limit: '200' })).data as { payment_date: string; id: string }[];
    const order = all.map((p) => [p.payment_date, p.id]);
    t.same(
      order,
      [...order].sort((a, b) => (a[0] === b[0] ? (a[1] < b[1] ? 1 : -1) : a[0] < b[0] ? 1 : -1)),
      'payment_date desc, then id desc',
    );
    const byOffset = await walkList(phi, REMITTANCES, {}, 'offset', 2);
    const byCursor = await walkList(phi, REMITTANCES, {}, 'cursor', 2);
    t.same(byCursor.ids, byOffset.ids);
    t.same(
      byOffset.ids,
      all.map((p) => p.id),
    );
    const [posted] = await remittanceOf(recoupment.eraFileId);
    await db
      .updateTable('remittances')
      .set({ status: 'posted' })
      .where('agency_id', '=', agencyId)
      .where('id', '=', posted.id)
      .execute();
    t.same(
      (await listPage(phi, REMITTANCES, { status: 'posted', era_file_id: recoupment.eraFileId })).data.map(
        (p: { id: string }) => p.id,
      ),
      [posted.id],
    );
    t.notOk(
      (await listPage(phi, REMITTANCES, { status: 'received', limit: '200' })).data.some(
        (p: { id: string }) => p.id === posted.id,
      ),
    );
    const received = await listPage(phi, REMITTANCES, {
      status: 'received',
      era_file_id: secondary.eraFileId,
      limit: '1',
    });
    t.match(received.meta, {
      total: 2,
      total_exact: true,
      limit: 1,
      offset: 0,
      has_more: true,
      next_offset: 1,
      next_cursor: String,
    });
    const refused = await phi.request({ method: 'GET', url: REMITTANCES, query: { status: 'matching' } });
    t.equal(refused.statusCode, 400, 'a status outside the set');
  },
);

t.test('listRemittanceAllocations: the claims of a payment in file order, with every figure of the 835', async (t) => {
  const [payment] = await remittanceOf(medicare.eraFileId);
  const page = await listPage(phi, allocationsUrl(payment.id));
  t.equal(page.data.length, 5);
  const [sequestered, withLines, denied, reversal, correction] = page.data;
  t.match(sequestered, {
    remittance_id: payment.id,
    claim_id: 'M0100001-261001',
    payer_claim_number: '22261234567801',
    original_payer_claim_number: null,
    claim_status_code: '1',
    claim_status: 'processed_as_primary',
    claim_filing_indicator: 'MA',
    patient_name: 'HARTWELL, EDITH M',
    member_id: '1EG4TE5MK73',
    service_date_from: '2026-10-01',
    service_date_to: '2026-10-30',
    charged_amount: '3150.00',
    allowed_amount: '2100.00',
    paid_amount: '2058.00',
    adjustment_amount: '1092.00',
    patient_responsibility_amount: '0.00',
    variance_amount: '0.00',
    adjustment_codes: [
      { code: 'CO-45', group_code: 'CO', reason_code: '45', amount: '1050.00' },
      { code: 'CO-253', group_code: 'CO', reason_code: '253', amount: '42.00' },
    ],
  });
  t.match(withLines, {
    allowed_amount: '1000.00',
    patient_responsibility_amount: '240.00',
    adjustment_codes: [
      { code: 'CO-45', amount: '200.00' },
      { code: 'PR-1' },
      { code: 'PR-2', amount: '40.00' },
      { code: 'PR-3' },
    ],
  });
  t.match(denied, {
    claim_status_code: '4',
    claim_status: 'denied',
    paid_amount: '0.00',
    allowed_amount: '0.00',
    adjustment_codes: [{ code: 'CO-50', amount: '1850.00' }],
  });
  t.match(reversal, {
    claim_status_code: '22',
    claim_status: 'reversal_of_previous_payment',
    charged_amount: '-2400.00',
    paid_amount: '-1568.00',
    allowed_amount: '-1600.00',
    original_payer_claim_number: '22261234500004',
    adjustment_codes: [
      { code: 'CR-45', amount: '-800.00' },
      { code: 'CR-253', amount: '-32.00' },
    ],
  });
  t.match(
    correction,
    {
      claim_status_code: '1',
      payer_claim_number: '22261234567805',
      original_payer_claim_number: '22261234500004',
      claim_id: reversal.claim_id,
    },
    'two allocations linked to the original claim number',
  );
  t.same(page.meta.summary, {
    claim_count: 5,
    charged_amount: '6200.00',
    allowed_amount: '3200.00',
    paid_amount: '2916.00',
    adjustment_amount: '3284.00',
    patient_responsibility_amount: '240.00',
    variance_amount: '0.00',
    adjustments_by_group: { CO: '3876.00', CR: '-832.00', OA: '0.00', PI: '0.00', PR: '240.00' },
    payment_amount: '2678.34',
    provider_adjustment_amount: '237.66',
    provider_adjustments: [
      {
        provider_id: '1234567893',
        fiscal_period_date: '2026-12-31',
        reason_code: 'L6',
        reference: '22261234567801',
        amount: '-12.34',
      },
      {
        provider_id: '1234567893',
        fiscal_period_date: '2026-12-31',
        reason_code: 'WO',
        reference: '22261234500099',
        amount: '250.00',
      },
    ],
  });
  const paged = await listPage(phi, allocationsUrl(payment.id), { limit: '2', offset: '2' });
  t.same(
    paged.data.map((a: { id: string }) => a.id),
    page.data.slice(2, 4).map((a: { id: string }) => a.id),
  );
  t.match(paged.meta, { total: 5, offset: 2, has_more: true, next_offset: 4, summary: { claim_count: 5 } });
  const cursorWalk = await walkList(phi, allocationsUrl(payment.id), {}, 'cursor', 2);
  t.same(
    cursorWalk.ids,
    page.data.map((a: { id: string }) => a.id),
  );
});

t.test(
  "listRemittanceAllocations: only provider-level adjustments, an unknown id, or another agency's: an empty page with total 0, never a 404",
  async (t) => {
    const [debit] = await remittanceOf(recoupment.eraFileId);
    const onlyPlb = await listPage(phi, allocationsUrl(debit.id));
    t.same(onlyPlb.data, []);
    t.match(onlyPlb.meta, {
      total: 0,
      has_more: false,
      next_offset: null,
      summary: {
        claim_count: 0,
        paid_amount: '0.00',
        payment_amount: '-150.00',
        provider_adjustment_amount: '150.00',
        provider_adjustments: [{ reason_code: 'WO', amount: '150.00' }],
      },
    });
    const unknown = await listPage(phi, allocationsUrl('rem_unknown'));
    t.same(unknown.data, []);
    t.same(unknown.meta, {
      total: 0,
      total_exact: true,
      limit: 50,
      offset: 0,
      has_more: false,
      next_offset: null,
      next_cursor: null,
      summary: {
        claim_count: 0,
        charged_amount: '0.00',
        allowed_amount: '0.00',
        paid_amount: '0.00',
        adjustment_amount: '0.00',
        patient_responsibility_amount: '0.00',
        variance_amount: '0.00',
        adjustments_by_group: { CO: '0.00', CR: '0.00', OA: '0.00', PI: '0.00', PR: '0.00' },
        payment_amount: null,
        provider_adjustment_amount: '0.00',
        provider_adjustments: [],
      },
    });
    const [payment] = await remittanceOf(medicare.eraFileId);
    const other = await signIn(api);
    t.same(
      (await listPage(other, allocationsUrl(payment.id))).meta,
      unknown.meta,
      "another agency's remittance answers like an unknown one",
    );
    t.same(
      (await listPage(other, REMITTANCES, { era_file_id: medicare.eraFileId })).data,
      [],
      'and is not in its list',
    );
  },
);

t.test("claims are matched to the agency's patients by MRN, member id and last name", async (t) => {
  const patients = await db
    .selectFrom('patients')
    .innerJoin('coverages', (join) =>
      join.onRef('coverages.agency_id', '=', 'patients.agency_id').onRef('coverages.patient_id', '=', 'patients.id'),
    )
    .select(['patients.id', 'patients.mrn', 'patients.last_name', 'coverages.policy_number'])
    .where('patients.agency_id', '=', agencyId)
    .where('coverages.policy_number', 'is not', null)
    .where('coverages.coverage_order', '=', 0)
    .orderBy('patients.mrn')
    .limit(4)
    .execute();
  const [a, b, c, d] = patients;
  const text = eraText(
    [
      { pcn: `${a.mrn}-2611`, paid: '100.00', segments: [`NM1*QC*1*${a.last_name.toUpperCase()}*X`] },
      { pcn: b.mrn!, paid: '100.00', segments: [`NM1*QC*1*NOTTHENAME*X****MI*${b.policy_number}`] },
      { pcn: `${c.mrn}-2611`, paid: '100.00', segments: ['NM1*QC*1*NOTTHENAME*X****MI*NOTTHEMEMBER'] },
      { pcn: 'UNKNOWN-1', paid: '100.00', segments: [`NM1*QC*1*NOTTHENAME*X****MI*${d.policy_number}`] },
      { pcn: 'UNKNOWN-2', paid: '100.00', segments: ['NM1*QC*1*NOTTHENAME*X****MI*NOTTHEMEMBER'] },
    ],
    'MATCHTRACE',
  );
  const imported = await importText(db, agencyId, 'match.835', text);
  t.same(imported.matches, { matched: 2, partially_matched: 2, unmatched: 1 });
  const [payment] = await remittanceOf(imported.eraFileId);
  const rows = (await listPage(phi, allocationsUrl(payment.id))).data.map(
    (r: { match_status: string; patient_id: string | null }) => [r.match_status, r.patient_id],
  );
  t.same(rows, [
    ['matched', a.id],
    ['matched', b.id],
    ['partially_matched', c.id],
    ['partially_matched', d.id],
    ['unmatched', null],
  ]);
});

t.test('no_phi, listRemittances: check and trace numbers removed, dates to the year', async (t) => {
  const [real] = await remittanceOf(medicare.eraFileId);
  const [masked] = await remittanceOf(medicare.eraFileId, noPhi);
  t.same(masked, {
    ...real,
    check_or_eft_number: null,
    payment_date: '2026-01-01',
    received_at: `${real.received_at.slice(0, 4)}-01-01T00:00:00.000Z`,
  });
});

t.test(
  'no_phi, listRemittanceAllocations: claim, payer claim, member and patient references as stable handles, names and PLB references removed, dates to the year',
  async (t) => {
    const [payment] = await remittanceOf(medicare.eraFileId);
    const real = await listPage(phi, allocationsUrl(payment.id));
    const masked = await listPage(noPhi, allocationsUrl(payment.id));
    const [, , , reversal, correction] = masked.data;
    for (const [i, allocation] of masked.data.entries()) {
      const original = real.data[i];
      t.match(allocation, {
        id: original.id,
        claim_id: /^CL-/,
        payer_claim_number: /^PC-/,
        member_id: /^MB-/,
        patient_name: null,
        service_date_from: '2026-01-01',
        charged_amount: original.charged_amount,
        adjustment_codes: original.adjustment_codes,
      });
      t.equal(allocation.patient_id === null, original.patient_id === null);
      if (original.patient_id) t.match(allocation.patient_id, /^PT-/);
    }
    t.equal(
      reversal.original_payer_claim_number,
      reversal.payer_claim_number,
      'the reversal names its own claim number',
    );
    t.equal(correction.original_payer_claim_number, reversal.payer_claim_number, 'one handle for one claim number');
    t.equal(correction.claim_id, reversal.claim_id);
    t.same(
      masked.meta.summary.provider_adjustments.map((a: { reference: string | null; fiscal_period_date: string }) => [
        a.reference,
        a.fiscal_period_date,
      ]),
      [
        [null, '2026-01-01'],
        [null, '2026-01-01'],
      ],
    );
    t.same(
      { ...masked.meta.summary, provider_adjustments: [] },
      { ...real.meta.summary, provider_adjustments: [] },
      'the totals are kept',
    );
    const otherSession = await signIn(api, { phiMode: 'no_phi', integration: { agencyId } });
    t.same(
      (await listPage(otherSession, allocationsUrl(payment.id))).data,
      masked.data,
      'stable across sessions of the agency',
    );
    const body = JSON.stringify(masked);
    for (const secret of [
      'HARTWELL',
      '1EG4TE5MK73',
      'M0100001-261001',
      '22261234567801',
      '22261234500099',
      '2026-10-01',
    ])
      t.notOk(body.includes(secret), `${secret} is not served`);
  },
);

t.test('the demo seed imports a few weeks of payments through the import path', async (t) => {
  const files = await db
    .selectFrom('era_files')
    .select(['id', 'file_name'])
    .where('agency_id', '=', agencyId)
    .where('file_name', 'like', '%-era-%')
    .execute();
  t.equal(files.length, 5, 'three weekly Medicare payments, a Medicare Advantage check, a recoupment');
  const demo = new Set(files.map((f) => f.id));
  const payments = (await listPage(phi, REMITTANCES, { limit: '200' })).data.filter((p: { era_file_id: string }) =>
    demo.has(p.era_file_id),
  );
  t.same(payments.map((p: { status: string }) => p.status).sort(), [
    'posted',
    'received',
    'received',
    'received',
    'reconciled',
  ]);
  t.ok(payments.some((p: { payment_method: string; credit_debit: string }) => p.payment_method === 'CHK'));
  t.ok(
    payments.some(
      (p: { credit_debit: string; claim_count: number }) => p.credit_debit === 'debit' && p.claim_count === 0,
    ),
  );
  const allocations = await db
    .selectFrom('remittance_allocations')
    .select(['match_status', 'claim_status_code'])
    .where('agency_id', '=', agencyId)
    .where(
      'remittance_id',
      'in',
      payments.map((p: { id: string }) => p.id),
    )
    .execute();
  const count = (key: 'match_status' | 'claim_status_code', value: string) =>
    allocations.filter((a) => a[key] === value).length;
  t.ok(count('match_status', 'matched') >= allocations.length - 2, 'the demo bills its own patients');
  t.equal(count('match_status', 'partially_matched'), 1);
  t.equal(count('match_status', 'unmatched'), 1);
  t.equal(count('claim_status_code', '4'), 1, 'a denial');
  t.equal(count('claim_status_code', '22'), 1, 'a reversal');
});
