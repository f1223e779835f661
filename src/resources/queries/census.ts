import { sql } from 'kysely';
import type { TenantStore } from '../../db/tenant-store.js';
import { SERVICE_LINES } from '../../domain/contract-values.js';
import { column, levelColumn, levelOf, OFFICE_ID, type GovernedQuery, readsDataOf } from './governed-query.js';

interface CensusParameters {
  service_line?: (typeof SERVICE_LINES)[number];
  office_id?: string;
}

/** The agency's active charts, each with its office's name (charts without an office: office_id "" and "Unassigned"). */
function activeCharts(store: TenantStore) {
  return store
    .selectFrom('patients')
    .leftJoin('offices', (join) => join.on(store.ofAgency('offices')).onRef('offices.id', '=', 'patients.office_id'))
    .where('patients.status', '=', 'active');
}

const OFFICE = {
  name: sql<string>`coalesce(offices.name, 'Unassigned')`,
  id: sql<string>`coalesce(patients.office_id, '')`,
};

/** The daily census: active charts per office and service line. */
export const activeCensus: GovernedQuery<CensusParameters> = {
  id: 'active_census',
  title: 'Active census by office and service line',
  description:
    'Patients whose chart is active now, counted per office and service line (one row per pair that has any). Charts with no office count under office_id "" (Unassigned).',
  parameters: {
    properties: {
      service_line: { type: 'string', enum: SERVICE_LINES, description: 'Only this service line.' },
      office_id: OFFICE_ID,
    },
  },
  columns: [
    column('office_name', 'string', 'Office name ("Unassigned" for charts without an office).'),
    column('office_id', 'string', 'Office id ("" for charts without an office).'),
    column('service_line', 'string', `${SERVICE_LINES.join(', ')}.`),
    column('active_patients', 'integer', 'Active charts.'),
  ],
  order: { columns: ['office_name', 'office_id', 'service_line'], direction: 'asc' },
  ...readsDataOf('listPatients'),
  costUnits: 5,
  rows(store, parameters) {
    let patients = activeCharts(store);
    if (parameters.service_line !== undefined)
      patients = patients.where('patients.service_line', '=', parameters.service_line);
    if (parameters.office_id !== undefined) patients = patients.where('patients.office_id', '=', parameters.office_id);
    return patients
      .select([
        OFFICE.name.as('office_name'),
        OFFICE.id.as('office_id'),
        'patients.service_line',
        sql<number>`count(*)::int`.as('active_patients'),
      ])
      .groupBy([OFFICE.name, OFFICE.id, 'patients.service_line']);
  },
};

/** The census in one read: the agency's total and each office's, with a column per service line of the contract. */
export const censusSummary: GovernedQuery = {
  id: 'census_summary',
  title: 'Census summary by office, with the agency total',
  description:
    'Patients whose chart is active now: the agency\'s total on the first row, then one row per office that has any (charts with no office under office_id "", Unassigned), each with a column per service line and their total.',
  parameters: { properties: {} },
  columns: [
    levelColumn('office'),
    column(
      'office_name',
      'string',
      'Office name ("Unassigned" for charts without an office, "All offices" on the agency row).',
    ),
    column('office_id', 'string', 'Office id ("" for charts without an office and on the agency row).'),
    ...SERVICE_LINES.map((line) => column(line, 'integer', `Active ${line} charts.`)),
    column('active_patients', 'integer', 'Active charts, every service line.'),
  ],
  order: { columns: ['level', 'office_name', 'office_id'], direction: 'asc' },
  ...readsDataOf('listPatients'),
  costUnits: 5,
  rows: (store) =>
    activeCharts(store)
      .select([
        levelOf('office', OFFICE.id),
        sql<string>`coalesce(${OFFICE.name}, 'All offices')`.as('office_name'),
        sql<string>`coalesce(${OFFICE.id}, '')`.as('office_id'),
        ...SERVICE_LINES.map((line) =>
          sql<number>`(count(*) filter (where patients.service_line = ${line}))::int`.as(line),
        ),
        sql<number>`count(*)::int`.as('active_patients'),
      ])
      .groupBy(sql`grouping sets ((${OFFICE.name}, ${OFFICE.id}), ())`),
};
