import type { JSONColumnType } from 'kysely';
import type { components } from '../../generated/openapi.js';
import type { TenantRow } from '../../db/tables/tenant-row.js';

export type CollectionVisibility = 'agency' | 'editors' | 'personal';
export type CollectionField = components['schemas']['WorkingCollectionField'];
/** A stored value, keyed by field id in a row; whether it fits its field is checked when served (src/domain/working-collections). */
export type StoredCell = string | number | boolean | null;

/** Tables of db/migrations/0016_working_collections.ts. */
interface WorkingCollectionsTable extends TenantRow {
  name: string;
  purpose: string | null;
  visibility: CollectionVisibility;
  /** A user of the agency (agency_users). */
  owner_id: string;
  fields: JSONColumnType<CollectionField[], string>;
}

/** One editor of a collection: exactly one of a user and an extension. */
interface WorkingCollectionEditorsTable extends TenantRow {
  collection_id: string;
  user_id: string | null;
  extension_id: string | null;
}

interface WorkingCollectionRowsTable extends TenantRow {
  collection_id: string;
  /** Order of the row in its collection; ties fall back to the id. */
  position: number;
  values: JSONColumnType<Record<string, StoredCell>, string>;
}

export interface WorkingCollectionTables {
  working_collections: WorkingCollectionsTable;
  working_collection_editors: WorkingCollectionEditorsTable;
  working_collection_rows: WorkingCollectionRowsTable;
}
