import { sql } from 'kysely';
import type { TenantStore } from '../../db/tenant-store.js';
import { checkDateRange, column, DATE_RANGE, dayAfter, type GovernedQuery, readsDataOf } from './governed-query.js';

export interface DateRange {
  from: string;
  to: string;
}

/** Referrals received in [from, to] (UTC days). */
export function referralsDatedIn(store: TenantStore, { from, to }: DateRange) {
  return store
    .selectFrom('referrals')
    .where('referrals.referral_date', '>=', sql<Date>`cast(${from} as date)::timestamp at time zone 'UTC'`)
    .where('referrals.referral_date', '<', sql<Date>`cast(${dayAfter(to)} as date)::timestamp at time zone 'UTC'`);
}

/**
 * Referrals received in [from, to], with their listed source. A referral names its source by id (the agency's
 * directory) or as free text; free text is not a group a spreadsheet can rely on, nor fit for a no_phi session, so
 * those count under the source id "" ("Not a listed source").
 */
function referralsReceived(store: TenantStore, range: DateRange) {
  return referralsDatedIn(store, range).leftJoin('referral_sources', (join) =>
    join.on(store.ofAgency('referral_sources')).onRef('referral_sources.id', '=', 'referrals.referral_source_id'),
  );
}

const SOURCE = {
  name: sql<string>`coalesce(referral_sources.name, 'Not a listed source')`,
  id: sql<string>`coalesce(referral_sources.id, '')`,
  type: sql<string>`coalesce(referral_sources.source_type, 'unlisted')`,
};

const SOURCE_COLUMNS = [
  column(
    'source_name',
    'string',
    'Listed referral source ("Not a listed source" for referrals that name none or name one as free text).',
  ),
  column('source_id', 'string', 'Its id ("" for those not listed).'),
  column(
    'source_type',
    'string',
    'hospital, skilled_nursing_facility, physician_office, assisted_living_facility, community, self_or_family, or unlisted.',
  ),
];

export const RANGE = { properties: DATE_RANGE, required: ['from', 'to'] } as const;

export const referralsBySource: GovernedQuery<DateRange> = {
  id: 'referrals_by_source',
  title: 'Referrals by source and disposition',
  description:
    'Referrals received from `from` to `to` (UTC days, both included), counted per listed referral source and disposition (accepted, declined).',
  parameters: RANGE,
  check: checkDateRange,
  columns: [
    ...SOURCE_COLUMNS,
    column('disposition', 'string', 'accepted or declined.'),
    column('referrals', 'integer', 'Referrals received.'),
  ],
  order: { columns: ['source_name', 'source_id', 'disposition'], direction: 'asc' },
  ...readsDataOf('listReferrals'),
  costUnits: 5,
  rows: (store, range) =>
    referralsReceived(store, range)
      .select([
        SOURCE.name.as('source_name'),
        SOURCE.id.as('source_id'),
        SOURCE.type.as('source_type'),
        'referrals.disposition',
        sql<number>`count(*)::int`.as('referrals'),
      ])
      .groupBy([SOURCE.name, SOURCE.id, SOURCE.type, 'referrals.disposition']),
};

export const intakeConversionBySource: GovernedQuery<DateRange> = {
  id: 'intake_conversion_by_source',
  title: 'Intake conversion by referral source',
  description:
    'Referrals received from `from` to `to` (UTC days, both included) per listed referral source: how many were accepted, how many intakes reached admission, and the share admitted.',
  parameters: RANGE,
  check: checkDateRange,
  columns: [
    ...SOURCE_COLUMNS,
    column('referrals', 'integer', 'Referrals received.'),
    column('accepted', 'integer', 'Referrals accepted (in area and not declined).'),
    column('admitted', 'integer', 'Of them, intakes admitted.'),
    column('conversion_rate', 'number', 'admitted / referrals, rounded to 4 decimals.'),
  ],
  order: { columns: ['source_name', 'source_id'], direction: 'asc' },
  ...readsDataOf('listIntakes'),
  costUnits: 5,
  rows: (store, range) =>
    referralsReceived(store, range)
      .leftJoin('intakes', (join) => join.on(store.ofAgency('intakes')).onRef('intakes.id', '=', 'referrals.intake_id'))
      .select([
        SOURCE.name.as('source_name'),
        SOURCE.id.as('source_id'),
        SOURCE.type.as('source_type'),
        sql<number>`count(*)::int`.as('referrals'),
        sql<number>`(count(*) filter (where referrals.disposition = 'accepted'))::int`.as('accepted'),
        sql<number>`(count(*) filter (where intakes.status = 'admitted'))::int`.as('admitted'),
        sql<number>`round((count(*) filter (where intakes.status = 'admitted'))::numeric / count(*), 4)::float8`.as(
          'conversion_rate',
        ),
      ])
      .groupBy([SOURCE.name, SOURCE.id, SOURCE.type]),
};
