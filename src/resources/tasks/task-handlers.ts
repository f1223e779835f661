import type { components } from '../../generated/openapi.js';
import { resourceNotFound, type Handler, type RequestContext } from '../handler.js';
import { PlatformError, invalidInput } from '../../shared/platform-error.js';
import { randomId } from '../../shared/ids.js';
import { findTask, insertTask, updateTaskAtVersion, type TaskRow } from './task-repository.js';
import { taskView } from './task-view.js';
import { resourceExists } from '../../db/agency-resources.js';
import type { TenantStore } from '../../db/tenant-store.js';
import { checkTaskChange, expectedVersion } from '../../domain/task-workflow.js';
import { ownerOfCollection } from '../working-collections/working-collection-repository.js';

type Task = components['schemas']['Task'];
type RelatedResource = components['schemas']['RelatedResource'];
type TaskUpdate = components['schemas']['TaskUpdate'];

/** Related resources stored in this deployment; orders and remittances are not built yet. */
const LINKABLE_TYPES = [
  'patient',
  'referral',
  'intake',
  'visit',
  'working_collection',
  'working_collection_row',
] as const;
type LinkableType = (typeof LINKABLE_TYPES)[number];
const isLinkable = (type: string): type is LinkableType => (LINKABLE_TYPES as readonly string[]).includes(type);

/** Roles a task can be assigned to instead of a person. */
const ASSIGNABLE_ROLES = new Set(['marketer', 'clinician', 'reviewer']);

/** What a task is about, and who receives it when it names no assignee (a collection's owner, asked for a change). */
interface Link {
  columns: { related_type: LinkableType | null; related_id: string | null; related_collection_id: string | null };
  owner?: string;
}

async function relatedLink(store: TenantStore, related: RelatedResource | undefined): Promise<Link> {
  if (!related) return { columns: { related_type: null, related_id: null, related_collection_id: null } };
  if (!isLinkable(related.type)) {
    throw invalidInput(
      'related_resource.type',
      `Tasks cannot be linked to a ${related.type} in this deployment yet; link a ${LINKABLE_TYPES.join(', ')}.`,
    );
  }
  if (related.type === 'working_collection_row') return collectionRowLink(store, related.id, related.collection_id);
  // Only a working collection row has a collection; anything else sent here would be stored and served as sent.
  if (related.collection_id !== undefined)
    throw invalidInput(
      'related_resource.collection_id',
      `A ${related.type} has no collection_id; send it with a working_collection_row only.`,
    );
  if (related.type === 'working_collection') {
    const owner = await ownerOfCollection(store, related.id);
    if (!owner) throw invalidInput('related_resource.id', `No working_collection ${related.id} in this agency.`);
    return { columns: { related_type: related.type, related_id: related.id, related_collection_id: null }, owner };
  }
  if (!(await resourceExists(store, { kind: related.type, id: related.id }))) {
    throw invalidInput('related_resource.id', `No ${related.type} ${related.id} in this agency.`);
  }
  return { columns: { related_type: related.type, related_id: related.id, related_collection_id: null } };
}

async function collectionRowLink(store: TenantStore, rowId: string, collectionId: string | undefined): Promise<Link> {
  if (collectionId === undefined) {
    throw invalidInput(
      'related_resource.collection_id',
      'A working_collection_row is named by its id and its collection_id; send both.',
    );
  }
  const owner = await ownerOfCollection(store, collectionId, rowId);
  if (!owner)
    throw invalidInput(
      'related_resource.id',
      `No working_collection_row ${rowId} in working collection ${collectionId} of this agency.`,
    );
  return {
    columns: { related_type: 'working_collection_row', related_id: rowId, related_collection_id: collectionId },
    owner,
  };
}

async function checkAssignee(store: TenantStore, assigneeId: string | null | undefined) {
  if (!assigneeId || ASSIGNABLE_ROLES.has(assigneeId)) return;
  if (!(await resourceExists(store, { kind: 'agency_user', id: assigneeId }))) {
    throw invalidInput(
      'assignee_id',
      `assignee_id must be a user of the agency or one of the roles ${[...ASSIGNABLE_ROLES].join(', ')}.`,
    );
  }
}

/** Every answer carries the task's version as its ETag, for If-Match on the next update. */
function present(ctx: Pick<RequestContext<'getTask'>, 'response'>, row: TaskRow): { data: Task } {
  ctx.response.header('etag', `"${row.version}"`);
  return { data: taskView(row) };
}

const REPORTED_FIELDS = [
  'title',
  'description',
  'status',
  'priority',
  'due_date',
  'assignee_id',
  'completed_at',
] as const;

/** task.updated's data: the task after the update, the fields whose value it changed, and the status before. */
function taskUpdate(before: TaskRow, after: TaskRow): TaskUpdate {
  const [was, now] = [taskView(before), taskView(after)];
  return {
    task: now,
    changed_fields: REPORTED_FIELDS.filter((field) => was[field] !== now[field]),
    previous_status: was.status,
  };
}

export const createTask: Handler<'createTask'> = async (ctx) => {
  const { body, principal, store } = ctx;
  await checkAssignee(store, body.assignee_id);
  const link = await relatedLink(store, body.related_resource);
  const row = await insertTask(store, {
    id: randomId('task_', 12),
    title: body.title,
    description: body.description ?? null,
    status: 'open',
    priority: body.priority ?? 'normal',
    due_date: body.due_date ?? null,
    assignee_id: body.assignee_id ?? link.owner ?? null,
    ...link.columns,
    created_by: principal.extensionId,
    completed_at: null,
  });
  await store.emit({ type: 'task.created', data: taskView(row) });
  return present(ctx, row);
};

export const getTask: Handler<'getTask'> = async (ctx) => {
  const row = await findTask(ctx.store, ctx.params.id);
  if (!row) throw resourceNotFound('task', ctx.params.id);
  return present(ctx, row);
};

export const updateTask: Handler<'updateTask'> = async (ctx) => {
  const { body, params, store } = ctx;
  const current = await findTask(store, params.id);
  if (!current) throw resourceNotFound('task', params.id);
  const expected = expectedVersion(body.version, ctx.headers['if-match']);
  const stale = () =>
    new PlatformError(
      'PLATFORM_CONCURRENT_MODIFICATION',
      'The task changed since you read it; read it again and reapply your change.',
      {
        current_version: current.version,
      },
    );
  if (expected !== undefined && expected !== current.version) throw stale();
  checkTaskChange(current.status, body.status);
  await checkAssignee(store, body.assignee_id);
  const { version: _basedOn, ...change } = body;
  const completion =
    body.status && body.status !== current.status ? { completed_at: body.status === 'done' ? new Date() : null } : {};
  const updated = await updateTaskAtVersion(store, params.id, current.version, { ...change, ...completion });
  if (!updated) throw stale();
  await store.emit({ type: 'task.updated', data: taskUpdate(current, updated) });
  return present(ctx, updated);
};
