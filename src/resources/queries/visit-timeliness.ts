import { sql } from 'kysely';
import {
  checkDateRange,
  column,
  DATE_RANGE,
  dayAfter,
  OFFICE_ID,
  type GovernedQuery,
  readsDataOf,
} from './governed-query.js';

interface TimelinessParameters {
  from: string;
  to: string;
  grace_minutes: number;
  office_id?: string;
}

/**
 * Visits scheduled in [from, to] per discipline: missed ones, and late ones (started more than grace_minutes after
 * their scheduled start). Cancelled visits were never due, so they count nowhere.
 */
export const visitsMissedOrLate: GovernedQuery<TimelinessParameters> = {
  id: 'visits_missed_or_late',
  title: 'Visits missed or late by discipline',
  description:
    'Visits scheduled from `from` to `to` (UTC days, both included), per discipline: how many were due (not cancelled), missed, started late (more than `grace_minutes` after the scheduled start), and the share on time among those that started.',
  parameters: {
    properties: {
      ...DATE_RANGE,
      grace_minutes: {
        type: 'integer',
        minimum: 0,
        maximum: 240,
        default: 15,
        description: 'Minutes after the scheduled start a visit may begin and still be on time.',
      },
      office_id: OFFICE_ID,
    },
    required: ['from', 'to'],
  },
  check: checkDateRange,
  columns: [
    column('discipline', 'string', 'SN, PT, OT, ST, MSW or HHA.'),
    column('visits_due', 'integer', 'Visits scheduled in the range and not cancelled.'),
    column('visits_missed', 'integer', 'Of them, missed.'),
    column('visits_late', 'integer', 'Of them, started more than grace_minutes late.'),
    column('on_time_rate', 'number', 'Started on time / started, rounded to 4 decimals (null when none started).'),
  ],
  order: { columns: ['discipline'], direction: 'asc' },
  ...readsDataOf('listVisits'),
  costUnits: 5,
  rows(store, { from, to, grace_minutes, office_id }) {
    let visits = store
      .selectFrom('visits')
      .where('visits.status', '!=', 'cancelled')
      .where('visits.scheduled_start', '>=', sql<Date>`cast(${from} as date)::timestamp at time zone 'UTC'`)
      .where('visits.scheduled_start', '<', sql<Date>`cast(${dayAfter(to)} as date)::timestamp at time zone 'UTC'`);
    if (office_id !== undefined) visits = visits.where('visits.office_id', '=', office_id);
    const late = sql`visits.actual_start > visits.scheduled_start + make_interval(mins => ${grace_minutes}::int)`;
    const started = sql`visits.actual_start is not null`;
    return visits
      .select([
        'visits.discipline',
        sql<number>`count(*)::int`.as('visits_due'),
        sql<number>`(count(*) filter (where visits.status = 'missed'))::int`.as('visits_missed'),
        sql<number>`(count(*) filter (where ${late}))::int`.as('visits_late'),
        sql<
          number | null
        >`round((count(*) filter (where ${started} and not ${late}))::numeric / nullif(count(*) filter (where ${started}), 0), 4)::float8`.as(
          'on_time_rate',
        ),
      ])
      .groupBy('visits.discipline');
  },
};
