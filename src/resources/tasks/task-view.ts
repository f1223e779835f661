import type { components } from '../../generated/openapi.js';
import type { TaskRow } from './task-repository.js';

type Task = components['schemas']['Task'];

/** A stored task as the contract's Task. */
export function taskView(row: TaskRow): Task {
  const related: Task['related_resource'] =
    row.related_type && row.related_id
      ? {
          type: row.related_type,
          id: row.related_id,
          ...(row.related_collection_id ? { collection_id: row.related_collection_id } : {}),
        }
      : null;
  return {
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
  };
}
