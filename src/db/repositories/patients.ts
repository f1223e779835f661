import { sql, type Kysely, type Selectable, type SelectQueryBuilder } from 'kysely';
import { jsonArrayFrom, jsonObjectFrom } from 'kysely/helpers/postgres';
import { reusableQuery } from '../reusable-query.js';
import type { DB } from '../schema.js';
import type { CoveragesTable, PatientStatus, ServiceLine } from '../tables/clinical.js';
import type { CursorSeal } from '../cursor-seal.js';
import { listPage, type ListOrder, type PageRequest } from '../paging.js';

export interface PatientFilters {
  status?: PatientStatus;
  service_line?: ServiceLine;
  office_id?: string;
  updated_since?: string;
}

/** Census order: by name, then id, served by the patients_*_idx indexes. */
const BY_NAME: ListOrder = { columns: ['patients.last_name', 'patients.first_name', 'patients.id'], direction: 'asc' };

const SUMMARY_COLUMNS = [
  'patients.id', 'patients.mrn', 'patients.first_name', 'patients.middle_name', 'patients.last_name', 'patients.suffix',
  'patients.dob', 'patients.gender', 'patients.status', 'patients.service_line', 'patients.office_id',
  'patients.created_at', 'patients.updated_at',
  'current_episode.id as episode_id', 'current_episode.type as episode_type', 'current_episode.status as episode_status',
  'current_episode.start_date as episode_start_date', 'current_episode.end_date as episode_end_date',
] as const;

const DETAIL_COLUMNS = [
  ...SUMMARY_COLUMNS,
  'patients.primary_phone', 'patients.alt_phone', 'patients.preferred_phone',
  'patients.address_line_1', 'patients.address_line_2', 'patients.city', 'patients.state', 'patients.zip_code',
  'patients.primary_physician_id',
] as const;

/** Patients of one agency with their active episode (at most one, by the episodes_one_active index). */
function withCurrentEpisode<Q extends SelectQueryBuilder<DB, 'patients', object>>(patients: Q) {
  return patients.leftJoin('episodes as current_episode', (join) =>
    join
      .onRef('current_episode.agency_id', '=', 'patients.agency_id')
      .onRef('current_episode.patient_id', '=', 'patients.id')
      .on('current_episode.status', '=', 'active'),
  );
}

const patientsOf = (db: Kysely<DB>, agencyId: string) => db.selectFrom('patients').where('patients.agency_id', '=', agencyId);

/**
 * Pages over the name index alone, then reads the page's charts with their episodes: joining before the
 * offset would join every skipped row too (an offset of 50,000 took seconds on the large agency).
 */
export async function listPatientSummaries(db: Kysely<DB>, agencyId: string, filters: PatientFilters, page: PageRequest, seal: CursorSeal) {
  let matching = patientsOf(db, agencyId);
  if (filters.status) matching = matching.where('patients.status', '=', filters.status);
  if (filters.service_line) matching = matching.where('patients.service_line', '=', filters.service_line);
  if (filters.office_id) matching = matching.where('patients.office_id', '=', filters.office_id);
  if (filters.updated_since) matching = matching.where('patients.updated_at', '>=', new Date(filters.updated_since));
  const { rows: keys, meta } = await listPage(matching.select(['patients.id', 'patients.last_name', 'patients.first_name']), BY_NAME, page, seal);
  const ids = keys.map((key) => key.id);
  const charts = ids.length === 0 ? [] : await withCurrentEpisode(patientsOf(db, agencyId)).select(SUMMARY_COLUMNS).where('patients.id', 'in', ids).execute();
  const byId = new Map(charts.map((chart) => [chart.id, chart]));
  return { rows: ids.map((id) => byId.get(id)!), meta };
}

export type PatientSummaryRow = Awaited<ReturnType<typeof listPatientSummaries>>['rows'][number];

const COVERAGE_COLUMNS = [
  'coverages.id', 'coverages.payor_id', 'payors.name as payor_name', 'coverages.plan_name', 'coverages.policy_number',
  'coverages.group_number', 'coverages.effective_date', 'coverages.termination_date', 'coverages.coverage_order',
  'coverages.relationship_to_insured', 'coverages.insured_first_name', 'coverages.insured_middle_name', 'coverages.insured_last_name',
  'coverages.insured_suffix', 'coverages.insured_dob', 'coverages.insured_gender', 'coverages.insured_address_line_1',
  'coverages.insured_address_line_2', 'coverages.insured_city', 'coverages.insured_state', 'coverages.insured_zip_code',
] as const;

type CoverageColumn<T = (typeof COVERAGE_COLUMNS)[number]> = T extends `coverages.${infer C}` ? C : never;
export type CoverageRow = Pick<Selectable<CoveragesTable>, Extract<CoverageColumn, keyof CoveragesTable>> & { payor_name: string | null };

const EPISODE_COLUMNS = ['episodes.id', 'episodes.type', 'episodes.status', 'episodes.start_date', 'episodes.end_date'] as const;

/** The chart with its coverage list (primary first) and episodes (newest first). */
function chartOf(db: Kysely<DB>, agencyId: string, id: string) {
  return withCurrentEpisode(patientsOf(db, agencyId))
    .select(DETAIL_COLUMNS)
    .select((eb) => [
      // Inside JSON a numeric is a number, not the exact text a column gives: float8 types it as what arrives.
      sql<number | null>`patients.latitude::float8`.as('latitude'),
      sql<number | null>`patients.longitude::float8`.as('longitude'),
      jsonArrayFrom(
        eb
          .selectFrom('coverages')
          .leftJoin('payors', (join) => join.onRef('payors.agency_id', '=', 'coverages.agency_id').onRef('payors.id', '=', 'coverages.payor_id'))
          .select(COVERAGE_COLUMNS)
          .whereRef('coverages.agency_id', '=', 'patients.agency_id')
          .whereRef('coverages.patient_id', '=', 'patients.id')
          .orderBy('coverages.coverage_order')
          .orderBy('coverages.id'),
      )
        // JSON keeps text as text: Kysely would otherwise read the numeric X12 codes ('18', '01') as numbers.
        .$castTo<CoverageRow[]>()
        .as('coverages'),
      jsonArrayFrom(
        eb
          .selectFrom('episodes')
          .select(EPISODE_COLUMNS)
          .whereRef('episodes.agency_id', '=', 'patients.agency_id')
          .whereRef('episodes.patient_id', '=', 'patients.id')
          .orderBy('episodes.start_date', 'desc')
          .orderBy('episodes.id', 'desc'),
      ).as('episodes'),
    ])
    .where('patients.id', '=', id);
}

/**
 * The chart as one JSON value, in one round trip: node-postgres describes and decodes every column of every
 * result anew, and for the thirty columns of a chart that took longer than parsing the same data as JSON.
 */
const patientDetail = reusableQuery('patient-detail', ['agencyId', 'id'], (db, { agencyId, id }) =>
  db.selectNoFrom(jsonObjectFrom(chartOf(db, agencyId, id)).as('chart')),
);

/** JSON carries instants as ISO text; the rest of the chart arrives as the columns would. */
export async function findPatientDetail(db: Kysely<DB>, agencyId: string, id: string) {
  const chart = (await patientDetail(db, { agencyId, id }))[0]?.chart;
  return chart ? { ...chart, created_at: new Date(chart.created_at), updated_at: new Date(chart.updated_at) } : undefined;
}

export type PatientDetailRow = NonNullable<Awaited<ReturnType<typeof findPatientDetail>>>;
