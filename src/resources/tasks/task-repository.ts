import type { Insertable, Selectable, Updateable } from 'kysely';
import type { CommandStore, TenantStore } from '../../db/tenant-store.js';
import type { TasksTable } from './task-tables.js';

export type TaskRow = Selectable<TasksTable>;

export function insertTask(store: CommandStore, row: Omit<Insertable<TasksTable>, 'agency_id'>): Promise<TaskRow> {
  return store.insertInto('tasks').values(row).returningAll().executeTakeFirstOrThrow();
}

export function findTask(store: TenantStore, id: string): Promise<TaskRow | undefined> {
  return store.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Applies a change only if the task is still at `version`; undefined when it has moved on. */
export function updateTaskAtVersion(
  store: CommandStore,
  id: string,
  version: number,
  change: Updateable<TasksTable>,
): Promise<TaskRow | undefined> {
  return store
    .updateTable('tasks')
    .set((eb) => ({ ...change, version: eb('version', '+', 1), updated_at: new Date() }))
    .where('id', '=', id)
    .where('version', '=', version)
    .returningAll()
    .executeTakeFirst();
}
