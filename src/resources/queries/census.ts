import { sql } from 'kysely';
import { column, OFFICE_ID, type GovernedQuery, readsDataOf } from './governed-query.js';

interface CensusParameters {
  service_line?: 'home_health' | 'hospice' | 'private_duty';
  office_id?: string;
}

/** The daily census: active charts per office and service line. */
export const activeCensus: GovernedQuery<CensusParameters> = {
  id: 'active_census',
  title: 'Active census by office and service line',
  description:
    'Patients whose chart is active now, counted per office and service line (one row per pair that has any). Charts with no office count under office_id "" (Unassigned).',
  parameters: {
    properties: {
      service_line: {
        type: 'string',
        enum: ['home_health', 'hospice', 'private_duty'],
        description: 'Only this service line.',
      },
      office_id: OFFICE_ID,
    },
  },
  columns: [
    column('office_name', 'string', 'Office name ("Unassigned" for charts without an office).'),
    column('office_id', 'string', 'Office id ("" for charts without an office).'),
    column('service_line', 'string', 'home_health, hospice or private_duty.'),
    column('active_patients', 'integer', 'Active charts.'),
  ],
  order: { columns: ['office_name', 'office_id', 'service_line'], direction: 'asc' },
  ...readsDataOf('listPatients'),
  costUnits: 5,
  rows(store, parameters) {
    let patients = store
      .selectFrom('patients')
      .leftJoin('offices', (join) => join.on(store.ofAgency('offices')).onRef('offices.id', '=', 'patients.office_id'))
      .where('patients.status', '=', 'active');
    if (parameters.service_line !== undefined)
      patients = patients.where('patients.service_line', '=', parameters.service_line);
    if (parameters.office_id !== undefined) patients = patients.where('patients.office_id', '=', parameters.office_id);
    const officeName = sql<string>`coalesce(offices.name, 'Unassigned')`;
    const officeId = sql<string>`coalesce(patients.office_id, '')`;
    return patients
      .select([
        officeName.as('office_name'),
        officeId.as('office_id'),
        'patients.service_line',
        sql<number>`count(*)::int`.as('active_patients'),
      ])
      .groupBy([officeName, officeId, 'patients.service_line']);
  },
};
