import type { Kysely, Selectable, SelectQueryBuilder } from 'kysely';
import type { DB } from '../schema.js';
import type { CoveragesTable, EpisodesTable, PatientStatus, ServiceLine } from '../tables/clinical.js';
import type { CursorSeal } from '../cursor-seal.js';
import { listPage, type ListOrder, type Page, type PageRequest } from '../paging.js';

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
  'patients.latitude', 'patients.longitude', 'patients.primary_physician_id',
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

export function listPatientSummaries(db: Kysely<DB>, agencyId: string, filters: PatientFilters, page: PageRequest, seal: CursorSeal) {
  let matching = patientsOf(db, agencyId);
  if (filters.status) matching = matching.where('patients.status', '=', filters.status);
  if (filters.service_line) matching = matching.where('patients.service_line', '=', filters.service_line);
  if (filters.office_id) matching = matching.where('patients.office_id', '=', filters.office_id);
  if (filters.updated_since) matching = matching.where('patients.updated_at', '>=', new Date(filters.updated_since));
  return listPage(withCurrentEpisode(matching).select(SUMMARY_COLUMNS), BY_NAME, page, seal, matching);
}

export type PatientSummaryRow = Awaited<ReturnType<typeof listPatientSummaries>> extends Page<infer Row> ? Row : never;

export function findPatientDetail(db: Kysely<DB>, agencyId: string, id: string) {
  return withCurrentEpisode(patientsOf(db, agencyId)).select(DETAIL_COLUMNS).where('patients.id', '=', id).executeTakeFirst();
}

export type PatientDetailRow = NonNullable<Awaited<ReturnType<typeof findPatientDetail>>>;

export type CoverageRow = Selectable<CoveragesTable> & { payor_name: string | null };

/** Coverage list, primary first, with the payor's name. */
export function coveragesOf(db: Kysely<DB>, agencyId: string, patientId: string): Promise<CoverageRow[]> {
  return db
    .selectFrom('coverages')
    .leftJoin('payors', (join) => join.onRef('payors.agency_id', '=', 'coverages.agency_id').onRef('payors.id', '=', 'coverages.payor_id'))
    .selectAll('coverages')
    .select('payors.name as payor_name')
    .where('coverages.agency_id', '=', agencyId)
    .where('coverages.patient_id', '=', patientId)
    .orderBy('coverages.coverage_order')
    .orderBy('coverages.id')
    .execute();
}

/** Every episode of a patient, newest first. */
export function episodesOf(db: Kysely<DB>, agencyId: string, patientId: string): Promise<Selectable<EpisodesTable>[]> {
  return db
    .selectFrom('episodes')
    .selectAll()
    .where('agency_id', '=', agencyId)
    .where('patient_id', '=', patientId)
    .orderBy('start_date', 'desc')
    .orderBy('id', 'desc')
    .execute();
}
