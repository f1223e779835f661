import type { RelatedResourceType, TaskPriority, TaskStatus } from '../resources/tasks/task-tables.js';
import { addDays, isoDay, laterThan } from './calendar.js';
import type { ChartContext } from './charts.js';
import type { Draft } from './drafts.js';
import type { Weights } from './random.js';

export interface TaskSubject {
  type: Extract<RelatedResourceType, 'patient' | 'referral' | 'intake' | 'visit'>;
  id: string;
  /** The subject existed from then: a task about it cannot be older. */
  since: Date;
}

const TITLES: Record<TaskSubject['type'], readonly string[]> = {
  patient: [
    'Call family about discharge plan',
    'Review medication reconciliation',
    'Confirm DME delivery',
    'Update emergency contact',
  ],
  referral: [
    'Follow up with referral source',
    'Request missing face-to-face documentation',
    'Send acceptance notice to referral source',
  ],
  intake: ['Verify insurance eligibility', 'Confirm policy holder details', 'Complete intake review'],
  visit: ['Reschedule missed visit', 'Co-sign visit note', 'Resolve EVV exception'],
};

const STATUS: Weights<TaskStatus> = { open: 35, in_progress: 20, done: 35, cancelled: 10 };
const PRIORITY: Weights<TaskPriority> = { low: 15, normal: 55, high: 22, urgent: 8 };
/** Changes a task has been through by the time it reaches each status. */
const VERSIONS: Record<TaskStatus, [number, number]> = {
  open: [1, 2],
  in_progress: [2, 3],
  done: [3, 4],
  cancelled: [2, 3],
};
const ASSIGNEE: Weights<'user' | 'role' | 'none'> = { user: 70, role: 20, none: 10 };
/** Tasks can be assigned to a role instead of a person. */
const ROLES = ['intake_coordinator', 'scheduler', 'clinical_manager'];

export function buildTask(ctx: ChartContext, subject: TaskSubject): Draft<'tasks'> {
  const { rng, now, reference } = ctx;
  const status = rng.weighted(STATUS);
  const version = rng.int(...VERSIONS[status]);
  const created_at = laterThan(rng, subject.since > addDays(now, -60) ? subject.since : addDays(now, -60), now);
  const completed_at = status === 'done' ? laterThan(rng, created_at, now) : null;
  const assignee = rng.weighted(ASSIGNEE);
  const staff = subject.type === 'visit' ? reference.clinicians.SN : reference.reviewers;
  return {
    id: rng.id('tsk'),
    title: rng.pick(TITLES[subject.type]),
    description: rng.maybe(0.6, () => `Opened from the ${subject.type} record; see its history for context.`),
    status,
    priority: rng.weighted(PRIORITY),
    due_date: rng.maybe(0.85, () => isoDay(addDays(created_at, rng.int(1, 14)))),
    assignee_id: assignee === 'user' ? rng.pick(staff).id : assignee === 'role' ? rng.pick(ROLES) : null,
    related_type: subject.type,
    related_id: subject.id,
    version,
    created_by: rng.pick([...reference.reviewers, ...reference.marketers]).id,
    completed_at,
    created_at,
    updated_at: completed_at ?? (version === 1 ? created_at : laterThan(rng, created_at, now)),
  };
}
