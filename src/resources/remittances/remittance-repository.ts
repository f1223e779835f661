import type { Insertable, Selectable } from 'kysely';
import type { CommandStore, TenantInsert, TenantStore } from '../../db/tenant-store.js';
import type { CursorSealer } from '../../db/cursor-sealer.js';
import { listPage, type ListOrder, type ListQuery, type Page } from '../../db/paging.js';
import type {
  EraFilesTable,
  RemittanceAllocationsTable,
  RemittanceProviderAdjustmentsTable,
  RemittancesTable,
  RemittanceStatus,
} from './remittance-tables.js';

type EraFileRow = Selectable<EraFilesTable>;
export type RemittanceRow = Selectable<RemittancesTable>;
export type AllocationRow = Selectable<RemittanceAllocationsTable>;
export type ProviderAdjustmentRow = Selectable<RemittanceProviderAdjustmentsTable>;

interface RemittanceFilters {
  status?: RemittanceStatus;
  eraFileId?: string;
}

/** Newest payment first, served by the remittances_*_idx indexes. */
const NEWEST: ListOrder = { columns: ['remittances.payment_date', 'remittances.id'], direction: 'desc' };
/** File order, served by the allocations' (remittance_id, position, id) key. */
const FILE_ORDER: ListOrder = {
  columns: ['remittance_allocations.position', 'remittance_allocations.id'],
  direction: 'asc',
};

export async function listRemittancePage(
  store: TenantStore,
  filters: RemittanceFilters,
  page: ListQuery,
  cursors: CursorSealer,
): Promise<Page<RemittanceRow>> {
  let query = store.selectFrom('remittances').selectAll('remittances');
  if (filters.status !== undefined) query = query.where('remittances.status', '=', filters.status);
  if (filters.eraFileId !== undefined) query = query.where('remittances.era_file_id', '=', filters.eraFileId);
  return listPage(store, query, NEWEST, page, cursors);
}

export function findRemittance(store: TenantStore, id: string): Promise<RemittanceRow | undefined> {
  return store.selectFrom('remittances').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listAllocationPage(
  store: TenantStore,
  remittanceId: string,
  page: ListQuery,
  cursors: CursorSealer,
): Promise<Page<AllocationRow>> {
  const query = store
    .selectFrom('remittance_allocations')
    .selectAll('remittance_allocations')
    .where('remittance_allocations.remittance_id', '=', remittanceId);
  return listPage(store, query, FILE_ORDER, page, cursors);
}

export function listProviderAdjustments(store: TenantStore, remittanceId: string): Promise<ProviderAdjustmentRow[]> {
  return store
    .selectFrom('remittance_provider_adjustments')
    .selectAll()
    .where('remittance_id', '=', remittanceId)
    .orderBy('position')
    .execute();
}

export function findFileByContent(store: TenantStore, sha256: string): Promise<EraFileRow | undefined> {
  return store.selectFrom('era_files').selectAll().where('sha256', '=', sha256).executeTakeFirst();
}

/** The payment already imported under this payer's trace number, with the file it came from. */
export function findByTrace(store: TenantStore, traceOriginator: string, traceNumber: string) {
  return store
    .selectFrom('remittances')
    .innerJoin('era_files', (join) =>
      join.on(store.ofAgency('era_files')).onRef('era_files.id', '=', 'remittances.era_file_id'),
    )
    .select(['remittances.id', 'era_files.id as era_file_id', 'era_files.file_name', 'era_files.created_at'])
    .where('remittances.trace_originator', '=', traceOriginator)
    .where('remittances.trace_number', '=', traceNumber)
    .executeTakeFirst();
}

/** Every file imported for the agency, newest first. */
export function listFiles(store: TenantStore): Promise<EraFileRow[]> {
  return store.selectFrom('era_files').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
}

export async function insertFile(store: CommandStore, file: TenantInsert<'era_files'>): Promise<void> {
  await store.insertInto('era_files').values(file).execute();
}

export async function finishFile(
  store: CommandStore,
  id: string,
  counts: { payment_count: number; claim_count: number },
): Promise<void> {
  await store.updateTable('era_files').set(counts).where('id', '=', id).execute();
}

export async function insertRemittance(store: CommandStore, remittance: TenantInsert<'remittances'>): Promise<void> {
  await store.insertInto('remittances').values(remittance).execute();
}

export async function finishRemittance(
  store: CommandStore,
  id: string,
  totals: Partial<Insertable<RemittancesTable>>,
  adjustments: TenantInsert<'remittance_provider_adjustments'>[],
): Promise<void> {
  await store.updateTable('remittances').set(totals).where('id', '=', id).execute();
  if (adjustments.length > 0) await store.insertInto('remittance_provider_adjustments').values(adjustments).execute();
}

export async function insertAllocations(
  store: CommandStore,
  allocations: TenantInsert<'remittance_allocations'>[],
): Promise<void> {
  if (allocations.length === 0) return;
  await store.insertInto('remittance_allocations').values(allocations).execute();
}

/** Patients whose MRN is one of `mrns`, with their normalized last name: read to match claims, not served. */
export function patientsByMrn(store: TenantStore, mrns: readonly string[]) {
  if (mrns.length === 0) return Promise.resolve([]);
  return store
    .lookupFrom('patients')
    .select(['id', 'mrn', 'match_last_name'])
    .where('mrn', 'in', [...new Set(mrns)])
    .execute();
}

/** Patients whose coverages hold one of these policy (member) numbers. */
export function coverageHolders(store: TenantStore, memberIds: readonly string[]) {
  if (memberIds.length === 0) return Promise.resolve([]);
  return store
    .selectFrom('coverages')
    .select(['patient_id', 'policy_number'])
    .where('policy_number', 'in', [...new Set(memberIds)])
    .execute();
}
