import { sql } from 'kysely';
import { VISIT_STATUSES } from '../../domain/contract-values.js';
import { column, type GovernedQuery, readsDataOf } from './governed-query.js';

interface YearParameter {
  year: number;
}

/** The first instant of a calendar year, UTC. */
const yearStart = (year: number) => {
  const instant = `${year}-01-01T00:00:00Z`;
  return sql<Date>`cast(${instant} as timestamptz)`;
};

/**
 * Visits per status of one calendar year, and those of past years (years before the run's) still in a status: what a
 * no_phi session can ask of visits, whose dates it knows to the year.
 */
export const visitStatusByYear: GovernedQuery<YearParameter> = {
  id: 'visit_status_by_year',
  title: 'Visits by status for a year',
  description:
    "Visits by their status now, one row per status that has any: those scheduled in `year` (UTC), and those scheduled in a past year (before the year of the run's as_of) up to the end of `year`, such as visits of past years still scheduled.",
  parameters: {
    properties: {
      year: { type: 'integer', minimum: 2000, maximum: 2100, description: 'Calendar year (UTC).' },
    },
    required: ['year'],
  },
  columns: [
    column('status', 'string', `${VISIT_STATUSES.join(', ')}.`),
    column('scheduled_in_year', 'integer', 'Visits in this status scheduled in the year.'),
    column(
      'scheduled_in_past_years',
      'integer',
      "Visits in this status scheduled before the year of the run's as_of and before the end of the year.",
    ),
  ],
  order: { columns: ['status'], direction: 'asc' },
  ...readsDataOf('listVisits'),
  costUnits: 5,
  rows(store, { year }, asOf) {
    const pastYearsEnd = yearStart(Math.min(year + 1, asOf.getUTCFullYear()));
    return store
      .selectFrom('visits')
      .where('visits.scheduled_start', '<', yearStart(year + 1))
      .select([
        'visits.status',
        sql<number>`(count(*) filter (where visits.scheduled_start >= ${yearStart(year)}))::int`.as(
          'scheduled_in_year',
        ),
        sql<number>`(count(*) filter (where visits.scheduled_start < ${pastYearsEnd}))::int`.as(
          'scheduled_in_past_years',
        ),
      ])
      .groupBy('visits.status');
  },
};
