import { sql } from 'kysely';
import type { DB } from './schema.js';
import type { TenantStore } from './tenant-store.js';

/** Agency-scoped resources that requests refer to by id, by the table that holds them. */
const TABLES = {
  patient: 'patients',
  referral: 'referrals',
  intake: 'intakes',
  visit: 'visits',
  referral_source: 'referral_sources',
  physician: 'physicians',
  payor: 'payors',
  hospital: 'hospitals',
  agency_user: 'agency_users',
  document: 'documents',
} as const satisfies Record<string, keyof DB>;

export type AgencyResourceKind = keyof typeof TABLES;

interface ResourceRef<K extends AgencyResourceKind = AgencyResourceKind> {
  kind: K;
  id: string;
}

/** The refs whose id is not a row of its kind in the agency (another agency's ids included), in one round trip. */
export async function missingResources<R extends ResourceRef>(store: TenantStore, refs: R[]): Promise<R[]> {
  if (refs.length === 0) return [];
  const kinds = [...new Set(refs.map((ref) => ref.kind))];
  const lookups = kinds.map((kind) =>
    store
      .lookupFrom(TABLES[kind])
      .select([sql.lit(kind).as('kind'), 'id'])
      .where(
        'id',
        'in',
        refs.filter((ref) => ref.kind === kind).map((ref) => ref.id),
      ),
  );
  const found = await lookups.reduce((all, lookup) => all.unionAll(lookup)).execute();
  const known = new Set(found.map((row) => `${row.kind}:${row.id}`));
  return refs.filter((ref) => !known.has(`${ref.kind}:${ref.id}`));
}

export async function resourceExists(store: TenantStore, ref: ResourceRef): Promise<boolean> {
  return (await missingResources(store, [ref])).length === 0;
}
