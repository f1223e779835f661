import type { components } from '../../generated/openapi.js';
import { servedValues } from '../../domain/working-collections/fields.js';
import type { CollectionListRow, CollectionRow, CollectionRowRow } from './working-collection-repository.js';

type WorkingCollection = components['schemas']['WorkingCollection'];
type Definition = components['schemas']['WorkingCollectionDefinition'];
type Row = components['schemas']['WorkingCollectionRow'];

/** How the agency's people see the owner: their display name. */
export function ownerName(row: Pick<CollectionRow, 'owner_first_name' | 'owner_last_name'>): string {
  return `${row.owner_first_name} ${row.owner_last_name}`;
}

export function collectionView(row: CollectionListRow): WorkingCollection {
  const updatedAt = row.rows_updated_at && row.rows_updated_at > row.updated_at ? row.rows_updated_at : row.updated_at;
  return {
    id: row.id,
    name: row.name,
    purpose: row.purpose,
    // A listed collection is readable, so never personal (listReadableCollections).
    visibility: row.visibility as WorkingCollection['visibility'],
    owner_id: row.owner_id,
    owner_name: ownerName(row),
    owner_role: row.owner_role,
    row_count: row.row_count,
    updated_at: updatedAt.toISOString(),
  };
}

export function definitionView(row: CollectionRow): Definition {
  return { id: row.id, name: row.name, purpose: row.purpose, fields: row.fields };
}

/** A row as served, and the fields whose stored value does not fit the field's type (served as null). */
export function rowView(collection: CollectionRow, row: CollectionRowRow): { row: Row; misfits: string[] } {
  const { values, misfits } = servedValues(collection.fields, row.values);
  return { row: { id: row.id, values, updated_at: row.updated_at.toISOString() }, misfits };
}
