import { sql } from 'kysely';
import type { TenantStore } from '../../db/tenant-store.js';
import { listMeasureResults } from '../../resources/quality/hhvbp-repository.js';

/** An imported 835 with its payments (no claim rows: those name patients) and its claims per match status. */
export async function eraFileResult(store: TenantStore, id: string) {
  const file = await store.selectFrom('era_files').selectAll().where('id', '=', id).executeTakeFirst();
  if (!file) return undefined;
  const [payments, matches] = await Promise.all([
    store
      .selectFrom('remittances')
      .select([
        'id',
        'payer_name',
        'trace_number',
        'payment_method',
        'payment_date',
        'payment_amount',
        'claim_count',
        'charged_amount',
        'paid_amount',
        'adjustment_amount',
        'provider_adjustment_amount',
      ])
      .where('era_file_id', '=', id)
      .orderBy('id')
      .execute(),
    store
      .selectFrom('remittance_allocations')
      .innerJoin('remittances', (join) =>
        join.on(store.ofAgency('remittances')).onRef('remittances.id', '=', 'remittance_allocations.remittance_id'),
      )
      .select(['remittance_allocations.match_status', sql<number>`count(*)::int`.as('claims')])
      .where('remittances.era_file_id', '=', id)
      .groupBy('remittance_allocations.match_status')
      .execute(),
  ]);
  return { file, payments, matches };
}

export type EraFileResult = NonNullable<Awaited<ReturnType<typeof eraFileResult>>>;

/** An HHVBP import with its measure figures. */
export async function hhvbpImportResult(store: TenantStore, id: string) {
  const imported = await store.selectFrom('hhvbp_imports').selectAll().where('id', '=', id).executeTakeFirst();
  return imported && { imported, measures: await listMeasureResults(store, id) };
}

export type HhvbpImportResult = NonNullable<Awaited<ReturnType<typeof hhvbpImportResult>>>;
