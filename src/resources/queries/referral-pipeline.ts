import { type RawBuilder, sql } from 'kysely';
import { DISPOSITIONS, INTAKE_STATUSES } from '../../domain/contract-values.js';
import { checkDateRange, column, type GovernedQuery, readsDataOf } from './governed-query.js';
import { type DateRange, RANGE, referralsDatedIn } from './referral-sources.js';

const countWhere = (condition: RawBuilder<unknown>, alias: string) =>
  sql<number>`(count(*) filter (where ${condition}))::int`.as(alias);

/** The pipeline of a range in one row: its referrals, their dispositions and what became of their intakes. */
export const referralPipeline: GovernedQuery<DateRange> = {
  id: 'referral_pipeline',
  title: 'Referral pipeline',
  description:
    'Referrals received from `from` to `to` (UTC days, both included), in one row: how many, how many per disposition, and how many of their intakes are in each intake status now.',
  parameters: RANGE,
  check: checkDateRange,
  columns: [
    column('referred_from', 'date', "The range's first day (the parameter from)."),
    column('referred_to', 'date', "The range's last day (the parameter to)."),
    column('referrals', 'integer', 'Referrals received.'),
    ...DISPOSITIONS.map((disposition) => column(`referrals_${disposition}`, 'integer', `Of them, ${disposition}.`)),
    ...INTAKE_STATUSES.map((status) =>
      column(`intakes_${status}`, 'integer', `Of them, those whose intake is ${status}.`),
    ),
  ],
  order: { columns: ['referred_from'], direction: 'asc' },
  ...readsDataOf('listIntakes'),
  costUnits: 5,
  rows: (store, range) =>
    referralsDatedIn(store, range)
      .leftJoin('intakes', (join) => join.on(store.ofAgency('intakes')).onRef('intakes.id', '=', 'referrals.intake_id'))
      .select([
        sql<string>`cast(cast(${range.from} as date) as text)`.as('referred_from'),
        sql<string>`cast(cast(${range.to} as date) as text)`.as('referred_to'),
        sql<number>`count(*)::int`.as('referrals'),
        ...DISPOSITIONS.map((disposition) =>
          countWhere(sql`referrals.disposition = ${disposition}`, `referrals_${disposition}`),
        ),
        ...INTAKE_STATUSES.map((status) => countWhere(sql`intakes.status = ${status}`, `intakes_${status}`)),
      ]),
};
