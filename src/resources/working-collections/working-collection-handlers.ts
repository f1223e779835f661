import type { Handler } from '../handler.js';
import { PlatformError } from '../../shared/platform-error.js';
import {
  findCollection,
  listCollectionRows,
  listReadableCollections,
  type CollectionRow,
} from './working-collection-repository.js';
import { collectionView, definitionView, ownerName, rowView } from './working-collection-view.js';

const ASK_THROUGH_A_TASK = 'POST /api/v1/ext/tasks';

/**
 * An id that names no collection of this agency (another agency's included, which answers exactly like an unknown id):
 * who can share it is said without naming anyone, since no owner can be named for it.
 */
function collectionNotFound(id: string): PlatformError {
  return new PlatformError(
    'PLATFORM_RESOURCE_NOT_FOUND',
    `No working collection ${id} in this agency. Only a collection's owner can share it: ask the colleague who keeps the worksheet to share it agency-wide or to add this extension as an editor. GET /api/v1/ext/working-collections lists the collections this extension can read.`,
    { resource_type: 'working_collection', id, who_can_share: 'owner' },
  );
}

/** A collection of this agency that this extension may not read: the refusal names its owner, who can share it. */
function collectionRefused(collection: CollectionRow): PlatformError {
  const reason = collection.visibility === 'personal' ? 'personal' : 'not_an_editor';
  const owner = ownerName(collection);
  const state =
    reason === 'personal' ? 'is personal to its owner' : 'is shared with other editors, not with this extension';
  return new PlatformError(
    'PLATFORM_ACCESS_DENIED',
    `Working collection ${collection.id} ${state}. Only its owner, ${owner} (${collection.owner_role}), can share it: ask them through a task (${ASK_THROUGH_A_TASK} with assignee_id ${collection.owner_id} and related_resource {"type": "working_collection", "id": "${collection.id}"}).`,
    {
      resource_type: 'working_collection',
      id: collection.id,
      reason,
      owner_id: collection.owner_id,
      owner_name: owner,
      owner_role: collection.owner_role,
    },
  );
}

export const listWorkingCollections: Handler<'listWorkingCollections'> = async (ctx) => {
  const { rows, meta } = await listReadableCollections(ctx.store, ctx.principal.extensionId, ctx.query, ctx.cursors);
  return { data: rows.map(collectionView), meta };
};

export const listWorkingCollectionRows: Handler<'listWorkingCollectionRows'> = async (ctx) => {
  const collection = await findCollection(ctx.store, ctx.principal.extensionId, ctx.params.id);
  if (!collection) throw collectionNotFound(ctx.params.id);
  if (!collection.readable) throw collectionRefused(collection);
  const { rows, meta } = await listCollectionRows(ctx.store, collection, ctx.query, ctx.cursors);
  const served = rows.map((row) => rowView(collection, row));
  const warnings = served.flatMap(({ row, misfits }) =>
    misfits.map(
      (field) =>
        `Row ${row.id}: the stored value of field ${field} does not fit the field's type and is served as null; the collection's owner can correct it.`,
    ),
  );
  return {
    data: served.map(({ row }) => row),
    meta: { ...meta, collection: definitionView(collection) },
    ...(warnings.length > 0 ? { warnings } : {}),
  };
};
