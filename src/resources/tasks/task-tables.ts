import type { Generated } from 'kysely';
import type { TenantRow, Timestamp } from '../../db/tables/tenant-row.js';

export type TaskStatus = 'open' | 'in_progress' | 'done' | 'cancelled';
export type TaskPriority = 'low' | 'normal' | 'high' | 'urgent';
export type RelatedResourceType =
  | 'patient'
  | 'referral'
  | 'intake'
  | 'visit'
  | 'physician_order'
  | 'remittance'
  | 'working_collection'
  | 'working_collection_row';

export interface TasksTable extends TenantRow {
  title: string;
  description: string | null;
  status: TaskStatus;
  priority: TaskPriority;
  due_date: string | null;
  /** A user id or a role name. */
  assignee_id: string | null;
  related_type: RelatedResourceType | null;
  related_id: string | null;
  related_collection_id: string | null;
  /** Optimistic concurrency: bumped on every change. */
  version: Generated<number>;
  created_by: string;
  /** Set exactly when status is done. */
  completed_at: Timestamp | null;
}

export interface TaskTables {
  tasks: TasksTable;
}
