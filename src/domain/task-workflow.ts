import type { components } from '../generated/openapi.js';
import { PlatformError } from '../shared/platform-error.js';

type TaskStatus = components['schemas']['Task']['status'];

/** open → in_progress → done; open or in_progress → cancelled; done and cancelled are final (as the contract says). */
const NEXT: Record<TaskStatus, readonly TaskStatus[]> = {
  open: ['in_progress', 'cancelled'],
  in_progress: ['done', 'cancelled'],
  done: [],
  cancelled: [],
};

function isFinal(status: TaskStatus): boolean {
  return NEXT[status].length === 0;
}

/** Refuses a change to a final task and a status change the workflow does not allow. */
export function checkTaskChange(current: TaskStatus, requested: TaskStatus | undefined) {
  if (isFinal(current)) {
    throw new PlatformError(
      'PLATFORM_INVALID_INPUT',
      `The task is ${current}, which is final; create a new task instead.`,
      { status: current },
    );
  }
  if (requested && requested !== current && !NEXT[current].includes(requested)) {
    throw new PlatformError(
      'PLATFORM_INVALID_INPUT',
      `A task cannot go from ${current} to ${requested}; allowed: ${NEXT[current].join(', ')}.`,
      {
        field: 'status',
        from: current,
        to: requested,
      },
    );
  }
}

/** The version a PATCH is based on, from the body or an If-Match header ("3", W/"3" or 3); both must agree. */
export function expectedVersion(bodyVersion: number | undefined, ifMatch: string | undefined): number | undefined {
  const fromHeader = ifMatch === undefined ? undefined : Number(ifMatch.replace(/^W\//, '').replace(/"/g, ''));
  if (fromHeader !== undefined && !(Number.isInteger(fromHeader) && fromHeader > 0)) {
    throw new PlatformError('PLATFORM_INVALID_INPUT', 'If-Match must be the task version, for example "3".', {
      field: 'If-Match',
    });
  }
  if (bodyVersion !== undefined && fromHeader !== undefined && bodyVersion !== fromHeader) {
    throw new PlatformError('PLATFORM_INVALID_INPUT', 'The body version and If-Match disagree; send one of them.', {
      field: 'version',
    });
  }
  return bodyVersion ?? fromHeader;
}
