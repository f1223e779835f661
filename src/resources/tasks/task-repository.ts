import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { TasksTable } from './task-tables.js';

export type TaskRow = Selectable<TasksTable>;

export function insertTask(db: Kysely<DB>, row: Insertable<TasksTable>): Promise<TaskRow> {
  return db.insertInto('tasks').values(row).returningAll().executeTakeFirstOrThrow();
}

export function findTask(db: Kysely<DB>, agencyId: string, id: string): Promise<TaskRow | undefined> {
  return db.selectFrom('tasks').selectAll().where('agency_id', '=', agencyId).where('id', '=', id).executeTakeFirst();
}

/** Applies a change only if the task is still at `version`; undefined when it has moved on. */
export function updateTaskAtVersion(db: Kysely<DB>, agencyId: string, id: string, version: number, change: Updateable<TasksTable>): Promise<TaskRow | undefined> {
  return db
    .updateTable('tasks')
    .set((eb) => ({ ...change, version: eb('version', '+', 1), updated_at: new Date() }))
    .where('agency_id', '=', agencyId)
    .where('id', '=', id)
    .where('version', '=', version)
    .returningAll()
    .executeTakeFirst();
}
