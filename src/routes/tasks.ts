import type { components } from '../generated/openapi.js';
import { resourceNotFound, type Handler, type RequestContext } from './handler.js';
import { PlatformError } from '../shared/platform-error.js';
import { randomId } from '../shared/ids.js';
import { findTask, insertTask, updateTaskAtVersion, type TaskRow } from '../db/repositories/tasks.js';
import { resourceExists } from '../db/repositories/agency-resources.js';
import { checkTaskChange, expectedVersion } from '../domain/task-workflow.js';

type Task = components['schemas']['Task'];
type RelatedResource = components['schemas']['RelatedResource'];
/** What the task helpers need of any task operation's context. */
type TaskContext = Pick<RequestContext<'getTask'>, 'principal' | 'db' | 'pseudonyms' | 'audit' | 'response'>;

/** Related resources stored in this deployment; orders, remittances and collections are not built yet. */
const LINKABLE_TYPES = ['patient', 'referral', 'intake', 'visit'] as const;
type LinkableType = (typeof LINKABLE_TYPES)[number];
const isLinkable = (type: string): type is LinkableType => (LINKABLE_TYPES as readonly string[]).includes(type);

/** Roles a task can be assigned to instead of a person. */
const ASSIGNABLE_ROLES = new Set(['marketer', 'clinician', 'reviewer']);

function invalid(field: string, message: string): PlatformError {
  return new PlatformError('PLATFORM_INVALID_INPUT', message, { field });
}

async function relatedColumns(ctx: TaskContext, related: RelatedResource | undefined) {
  if (!related) return { related_type: null, related_id: null, related_collection_id: null };
  if (!isLinkable(related.type)) {
    throw invalid('related_resource.type', `Tasks cannot be linked to a ${related.type} in this deployment yet; link a patient, referral, intake or visit.`);
  }
  // Only a working collection row has a collection; anything else sent here would be stored and served as sent.
  if (related.collection_id !== undefined) throw invalid('related_resource.collection_id', `A ${related.type} has no collection_id; send it with a working_collection_row only.`);
  const agencyId = ctx.principal.agencyId;
  // A no_phi session names a patient by its surrogate handle.
  const id = related.type === 'patient' && ctx.principal.phiMode === 'no_phi' ? await ctx.pseudonyms.resolve(agencyId, 'patient', related.id) : related.id;
  if (!(await resourceExists(ctx.db, agencyId, { kind: related.type, id }))) {
    throw invalid('related_resource.id', `No ${related.type} ${related.id} in this agency.`);
  }
  return { related_type: related.type, related_id: id, related_collection_id: related.collection_id ?? null };
}

async function checkAssignee(ctx: TaskContext, assigneeId: string | null | undefined) {
  if (!assigneeId || ASSIGNABLE_ROLES.has(assigneeId)) return;
  if (!(await resourceExists(ctx.db, ctx.principal.agencyId, { kind: 'agency_user', id: assigneeId }))) {
    throw invalid('assignee_id', `assignee_id must be a user of the agency or one of the roles ${[...ASSIGNABLE_ROLES].join(', ')}.`);
  }
}

function present(ctx: TaskContext, row: TaskRow): { data: Task } {
  ctx.audit.resourceIds = [row.id];
  ctx.response.header('etag', `"${row.version}"`);
  const related: Task['related_resource'] =
    row.related_type && row.related_id
      ? { type: row.related_type, id: row.related_id, ...(row.related_collection_id ? { collection_id: row.related_collection_id } : {}) }
      : null;
  return {
    data: {
      id: row.id,
      title: row.title,
      description: row.description,
      status: row.status,
      priority: row.priority,
      due_date: row.due_date,
      assignee_id: row.assignee_id,
      related_resource: related,
      version: row.version,
      created_by: row.created_by,
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
      completed_at: row.completed_at?.toISOString() ?? null,
    },
  };
}

export const createTask: Handler<'createTask'> = async (ctx) => {
  const { body, principal } = ctx;
  await checkAssignee(ctx, body.assignee_id);
  const row = await insertTask(ctx.db, {
    agency_id: principal.agencyId,
    id: randomId('task_', 12),
    title: body.title,
    description: body.description ?? null,
    status: 'open',
    priority: body.priority ?? 'normal',
    due_date: body.due_date ?? null,
    assignee_id: body.assignee_id ?? null,
    ...(await relatedColumns(ctx, body.related_resource)),
    created_by: principal.extensionId,
    completed_at: null,
  });
  return present(ctx, row);
};

export const getTask: Handler<'getTask'> = async (ctx) => {
  const row = await findTask(ctx.db, ctx.principal.agencyId, ctx.params.id);
  if (!row) throw resourceNotFound('task', ctx.params.id);
  return present(ctx, row);
};

export const updateTask: Handler<'updateTask'> = async (ctx) => {
  const { body, principal, params } = ctx;
  const current = await findTask(ctx.db, principal.agencyId, params.id);
  if (!current) throw resourceNotFound('task', params.id);
  const expected = expectedVersion(body.version, ctx.headers['if-match']);
  const stale = () =>
    new PlatformError('PLATFORM_CONCURRENT_MODIFICATION', 'The task changed since you read it; read it again and reapply your change.', {
      current_version: current.version,
    });
  if (expected !== undefined && expected !== current.version) throw stale();
  checkTaskChange(current.status, body.status);
  await checkAssignee(ctx, body.assignee_id);
  const { version: _basedOn, ...change } = body;
  const completion = body.status && body.status !== current.status ? { completed_at: body.status === 'done' ? new Date() : null } : {};
  const updated = await updateTaskAtVersion(ctx.db, principal.agencyId, params.id, current.version, { ...change, ...completion });
  if (!updated) throw stale();
  return present(ctx, updated);
};
