import { sql } from 'kysely';
import type { ClaimStatusCode } from '../../domain/era/era-values.js';
import type { TenantStore } from '../../db/tenant-store.js';
import {
  checkDateRange,
  column,
  DATE_RANGE,
  type GovernedQuery,
  levelColumn,
  levelOf,
  readsDataOf,
} from './governed-query.js';

interface PaymentDates {
  from: string;
  to: string;
}

const DENIED: ClaimStatusCode = '4';

/** Sum of a numeric(14, 2) allocation amount as a two-decimal string, "0.00" for a payer whose payments hold no claim. */
const total = (amount: string, alias: string) =>
  sql<string>`coalesce(sum(${sql.ref(`remittance_allocations.${amount}`)}), 0)::numeric(14, 2)::text`.as(alias);

const money = (name: string, description: string) =>
  column(name, 'string', `${description} (a decimal string with two decimals, as on the allocations).`);

const PAYER_COLUMNS = [
  column('payer_name', 'string', 'Payer as the ERA names it (N1*PR).'),
  column('payer_id', 'string', 'Payer identifier (N1*PR04 or the REF*2U; "" when the ERA gives none).'),
];

const FIGURE_COLUMNS = [
  column('payments', 'integer', 'ERA payments (one per ST/SE transaction, provider-level-only ones included).'),
  column('claims', 'integer', 'Claims paid, adjusted, denied or reversed in those payments.'),
  money('charged', "Claims' charges (CLP03)"),
  money('paid', "Claims' payments (CLP04)"),
  money('adjustments', 'Claim and service-line adjustments (CAS)'),
  money('patient_responsibility', 'Patient responsibility (CLP05)'),
  money('variance', 'Charged − paid − adjustments'),
  column('claims_with_variance', 'integer', 'Claims whose variance is not 0.'),
  column('denied_claims', 'integer', 'Claims the payer denied (CLP02 4).'),
];

/** The ERA payments dated in [from, to], each with the claims it allocates. */
function paymentsDated(store: TenantStore, { from, to }: PaymentDates) {
  return store
    .selectFrom('remittances')
    .leftJoin('remittance_allocations', (join) =>
      join
        .on(store.ofAgency('remittance_allocations'))
        .onRef('remittance_allocations.remittance_id', '=', 'remittances.id'),
    )
    .where('remittances.payment_date', '>=', from)
    .where('remittances.payment_date', '<=', to);
}

/** The figures of FIGURE_COLUMNS over a group of payments, money summed in SQL numeric. */
const FIGURES = [
  sql<number>`count(distinct remittances.id)::int`.as('payments'),
  sql<number>`count(remittance_allocations.id)::int`.as('claims'),
  total('charged_amount', 'charged'),
  total('paid_amount', 'paid'),
  total('adjustment_amount', 'adjustments'),
  total('patient_responsibility_amount', 'patient_responsibility'),
  total('variance_amount', 'variance'),
  sql<number>`(count(*) filter (where remittance_allocations.variance_amount <> 0))::int`.as('claims_with_variance'),
  sql<number>`(count(*) filter (where remittance_allocations.claim_status_code = ${DENIED}))::int`.as('denied_claims'),
];

const PAYER_ID = sql<string>`coalesce(remittances.payer_id, '')`;
const RANGE = { properties: DATE_RANGE, required: ['from', 'to'] } as const;
const VARIANCE =
  'charged, paid, adjusted, patient-responsibility and variance totals (variance: charged − paid − adjustments, 0 on a balanced claim), with how many claims have a variance and how many were denied';

export const remittanceVarianceByPayer: GovernedQuery<PaymentDates> = {
  id: 'remittance_variance_by_payer',
  title: 'Remittance variance by payer',
  description: `ERA payments dated from \`from\` to \`to\` (payment dates, both included), one row per payer: payments, claims, and the claims' ${VARIANCE}.`,
  parameters: RANGE,
  check: checkDateRange,
  columns: [...PAYER_COLUMNS, ...FIGURE_COLUMNS],
  order: { columns: ['payer_name', 'payer_id'], direction: 'asc' },
  ...readsDataOf('listRemittances'),
  costUnits: 5,
  rows: (store, range) =>
    paymentsDated(store, range)
      .select(['remittances.payer_name', PAYER_ID.as('payer_id'), ...FIGURES])
      .groupBy(['remittances.payer_name', PAYER_ID]),
};

export const remittanceTotals: GovernedQuery<PaymentDates> = {
  id: 'remittance_totals',
  title: 'Remittance totals, in all and by payer',
  description: `ERA payments dated from \`from\` to \`to\` (payment dates, both included): the agency's total on the first row, then one row per payer as remittance_variance_by_payer gives it, each with payments, claims, and the claims' ${VARIANCE}.`,
  parameters: RANGE,
  check: checkDateRange,
  columns: [levelColumn('payer'), ...PAYER_COLUMNS, ...FIGURE_COLUMNS],
  order: { columns: ['level', 'payer_name', 'payer_id'], direction: 'asc' },
  ...readsDataOf('listRemittances'),
  costUnits: 5,
  rows: (store, range) =>
    paymentsDated(store, range)
      .select([
        levelOf('payer', sql`remittances.payer_name`),
        sql<string>`coalesce(remittances.payer_name, 'All payers')`.as('payer_name'),
        sql<string>`coalesce(${PAYER_ID}, '')`.as('payer_id'),
        ...FIGURES,
      ])
      .groupBy(sql`grouping sets ((remittances.payer_name, ${PAYER_ID}), ())`),
};
