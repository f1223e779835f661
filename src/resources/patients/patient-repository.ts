import { sql } from 'kysely';
import { jsonObjectFrom } from 'kysely/helpers/postgres';
import { reusableTenantQuery, type TenantStore } from '../../db/tenant-store.js';
import type { ServiceLine } from '../../db/tables/tenant-row.js';
import type { PatientStatus } from './patient-tables.js';
import type { CursorSealer } from '../../db/cursor-sealer.js';
import { listPage, type ListOrder, type ListQuery } from '../../db/paging.js';

interface PatientFilters {
  status?: PatientStatus;
  service_line?: ServiceLine;
  office_id?: string;
  updated_since?: string;
}

/** Census order: by name, then id, served by the patients_*_idx indexes. */
const BY_NAME: ListOrder = { columns: ['patients.last_name', 'patients.first_name', 'patients.id'], direction: 'asc' };

/** A summary's columns; its current episode is the active one among the chart's episodes (at most one: episodes_one_active_idx). */
const SUMMARY_COLUMNS = [
  'patients.id',
  'patients.mrn',
  'patients.first_name',
  'patients.middle_name',
  'patients.last_name',
  'patients.suffix',
  'patients.dob',
  'patients.gender',
  'patients.status',
  'patients.service_line',
  'patients.office_id',
  'patients.created_at',
  'patients.updated_at',
  'patients.chart_episodes as episodes',
] as const;

const CHART_COLUMNS = [
  ...SUMMARY_COLUMNS,
  'patients.primary_phone',
  'patients.alt_phone',
  'patients.preferred_phone',
  'patients.address_line_1',
  'patients.address_line_2',
  'patients.city',
  'patients.state',
  'patients.zip_code',
  'patients.primary_physician_id',
  'patients.chart_coverages as coverages',
] as const;

/**
 * A page that skips no rows (offset 0, or after a cursor) reads its charts in its own statement. Past an offset it
 * pages over the name index alone, then reads the page's rows: reading them before the offset would read every
 * skipped row too (an offset of 50,000 took seconds on the large agency).
 */
export async function listPatientSummaries(
  store: TenantStore,
  filters: PatientFilters,
  page: ListQuery,
  cursors: CursorSealer,
) {
  let matching = store.selectFrom('patients');
  if (filters.status) matching = matching.where('patients.status', '=', filters.status);
  if (filters.service_line) matching = matching.where('patients.service_line', '=', filters.service_line);
  if (filters.office_id) matching = matching.where('patients.office_id', '=', filters.office_id);
  if (filters.updated_since) matching = matching.where('patients.updated_at', '>=', new Date(filters.updated_since));
  if ((page.offset ?? 0) === 0) return listPage(store, matching.select(SUMMARY_COLUMNS), BY_NAME, page, cursors);
  const { rows: keys, meta } = await listPage(
    store,
    matching.select(['patients.id', 'patients.last_name', 'patients.first_name']),
    BY_NAME,
    page,
    cursors,
  );
  const ids = keys.map((key) => key.id);
  const charts =
    ids.length === 0
      ? []
      : await store.selectFrom('patients').select(SUMMARY_COLUMNS).where('patients.id', 'in', ids).execute();
  const byId = new Map(charts.map((chart) => [chart.id, chart]));
  return { rows: ids.map((id) => byId.get(id)!), meta };
}

export type PatientSummaryRow = Awaited<ReturnType<typeof listPatientSummaries>>['rows'][number];

/**
 * The chart as one JSON value, in one round trip: node-postgres describes and decodes every column of every
 * result anew, and for the thirty columns of a chart that took longer than parsing the same data as JSON.
 * The chart is its columns with the copies of its coverages and episodes kept on the row.
 */
const patientDetail = reusableTenantQuery(
  'patient-detail',
  ['id'],
  (store, { id }) => {
    const chart = store
      .selectFrom('patients')
      .select(CHART_COLUMNS)
      .select([
        // Inside JSON a numeric is a number, not the exact text a column gives: float8 types it as what arrives.
        sql<number | null>`patients.latitude::float8`.as('latitude'),
        sql<number | null>`patients.longitude::float8`.as('longitude'),
      ])
      .where('patients.id', '=', id);
    return store.selectNoFrom(jsonObjectFrom(chart).as('chart'));
  },
  (row) => row.chart?.id,
);

/** JSON carries instants as ISO text; the rest of the chart arrives as the columns would. */
export async function findPatientDetail(store: TenantStore, id: string) {
  const chart = (await patientDetail(store, { id }))[0]?.chart;
  if (!chart) return undefined;
  return { ...chart, created_at: new Date(chart.created_at), updated_at: new Date(chart.updated_at) };
}

export type PatientDetailRow = NonNullable<Awaited<ReturnType<typeof findPatientDetail>>>;
