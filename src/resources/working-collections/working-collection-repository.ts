import { sql, type ExpressionBuilder } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { TenantStore } from '../../db/tenant-store.js';
import type { CursorSealer } from '../../db/cursor-sealer.js';
import { listPage, type ListOrder, type ListQuery } from '../../db/paging.js';

const BY_NAME: ListOrder = { columns: ['working_collections.name', 'working_collections.id'], direction: 'asc' };
/** The collection's row order, served by working_collection_rows_order_idx. */
const BY_POSITION: ListOrder = {
  columns: ['working_collection_rows.position', 'working_collection_rows.id'],
  direction: 'asc',
};

const COLLECTION_COLUMNS = [
  'working_collections.id',
  'working_collections.name',
  'working_collections.purpose',
  'working_collections.visibility',
  'working_collections.owner_id',
  'working_collections.fields',
  'working_collections.updated_at',
  'owner.first_name as owner_first_name',
  'owner.last_name as owner_last_name',
  'owner.role as owner_role',
] as const;

type Collections = ExpressionBuilder<DB, 'working_collections'>;

/** Whether the outer collection has a row of `table` (an editor, a row of its own) whose `column` is `value`. */
function collectionHas(
  store: TenantStore,
  table: 'working_collection_editors' | 'working_collection_rows',
  column: 'extension_id' | 'id',
  value: string,
) {
  return (eb: Collections) =>
    eb.exists(
      store
        .lookupFrom(`${table} as child` as 'working_collection_rows as child')
        .select(sql.lit(1).as('one'))
        .where('child.collection_id', '=', sql.ref<string>('working_collections.id'))
        .where(sql.ref(`child.${column}`), '=', value),
    );
}

/**
 * The one rule of who reads a collection: shared agency-wide, or shared with editors that name this
 * extension. Personal collections, and those shared with other editors only, are not readable.
 */
function readableBy(store: TenantStore, extensionId: string) {
  return (eb: Collections) =>
    eb.or([
      eb('working_collections.visibility', '=', 'agency'),
      eb.and([
        eb('working_collections.visibility', '=', 'editors'),
        collectionHas(store, 'working_collection_editors', 'extension_id', extensionId)(eb),
      ]),
    ]);
}

/** The agency's collections with their owners (every owner is a user of the same agency). */
function collectionsWithOwners(store: TenantStore) {
  return store
    .selectFrom('working_collections')
    .innerJoin('agency_users as owner', (join) =>
      join.on(store.ofAgency('owner')).onRef('owner.id', '=', 'working_collections.owner_id'),
    )
    .select(COLLECTION_COLUMNS);
}

/** Row counts and last row changes of some collections, by collection id. */
async function rowStats(store: TenantStore, ids: string[]) {
  if (ids.length === 0) return new Map<string, { row_count: number; rows_updated_at: Date | null }>();
  const stats = await store
    .selectFrom('working_collection_rows')
    .select([
      'collection_id',
      sql<number>`count(*)::int`.as('row_count'),
      sql<Date>`max(updated_at)`.as('rows_updated_at'),
    ])
    .where('collection_id', 'in', ids)
    .groupBy('collection_id')
    .execute();
  return new Map(stats.map(({ collection_id, ...stat }) => [collection_id, stat]));
}

/** The collections this extension may read, by name, each with its row count. */
export async function listReadableCollections(
  store: TenantStore,
  extensionId: string,
  page: ListQuery,
  cursors: CursorSealer,
) {
  const { rows, meta } = await listPage(
    store,
    collectionsWithOwners(store).where(readableBy(store, extensionId)),
    BY_NAME,
    page,
    cursors,
  );
  const ids = rows.map((row) => row.id);
  const stats = await rowStats(store, ids);
  return {
    rows: rows.map((row) => ({ ...row, ...(stats.get(row.id) ?? { row_count: 0, rows_updated_at: null }) })),
    meta,
  };
}

export type CollectionListRow = Awaited<ReturnType<typeof listReadableCollections>>['rows'][number];

/** A collection of the agency, readable or not, with whether this extension may read it; undefined for an unknown id. */
export function findCollection(store: TenantStore, extensionId: string, id: string) {
  return collectionsWithOwners(store)
    .select((eb) => readableBy(store, extensionId)(eb).as('readable'))
    .where('working_collections.id', '=', id)
    .executeTakeFirst();
}

export type CollectionRow = NonNullable<Awaited<ReturnType<typeof findCollection>>>;

const REFERENCES: ReadonlySet<string> = new Set(['patient_reference', 'order_reference']);

/**
 * A page of a collection's rows, in its order. The audit record names the collection (read before), its rows (as any
 * read does) and the patients and orders their values refer to: a row on a denial list says something about that patient.
 */
export async function listCollectionRows(
  store: TenantStore,
  collection: Pick<CollectionRow, 'id' | 'fields'>,
  page: ListQuery,
  cursors: CursorSealer,
) {
  const rows = store
    .selectFrom('working_collection_rows')
    .select([
      'working_collection_rows.id',
      'working_collection_rows.position',
      'working_collection_rows.values',
      'working_collection_rows.updated_at',
    ])
    .where('working_collection_rows.collection_id', '=', collection.id);
  const found = await listPage(store, rows, BY_POSITION, page, cursors);
  const references = collection.fields.filter((field) => REFERENCES.has(field.type)).map((field) => field.id);
  const referenced = found.rows.flatMap((row) =>
    references.map((id) => row.values[id]).filter((value): value is string => typeof value === 'string'),
  );
  store.auditReferences(referenced);
  return found;
}

export type CollectionRowRow = Awaited<ReturnType<typeof listCollectionRows>>['rows'][number];

/**
 * The owner of a collection, or of the collection of one of its rows (the row must belong to it), for a task that
 * asks for a change; undefined when there is no such collection or row in the agency.
 */
export async function ownerOfCollection(
  store: TenantStore,
  collectionId: string,
  rowId?: string,
): Promise<string | undefined> {
  let query = store
    .selectFrom('working_collections')
    .select('working_collections.owner_id')
    .where('working_collections.id', '=', collectionId);
  if (rowId !== undefined) {
    query = query.where(collectionHas(store, 'working_collection_rows', 'id', rowId));
  }
  return (await query.executeTakeFirst())?.owner_id;
}
