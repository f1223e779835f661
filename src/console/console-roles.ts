import type { UserRole } from '../db/tables/people.js';
import { DECIDING_ROLES } from '../proposals/proposals.js';

/**
 * What a person may do in the agency console: `administer` the agency's integrations, webhook subscriptions, imports
 * and people (administrators); `decide` the proposals of assistants (the roles `admin proposal approve` accepts);
 * `read` every page (every role: no console page shows PHI).
 */
export type ConsoleCapability = 'administer' | 'decide' | 'read';

export function mayIn(role: UserRole, capability: ConsoleCapability): boolean {
  if (capability === 'administer') return role === 'administrator';
  if (capability === 'decide') return (DECIDING_ROLES as readonly UserRole[]).includes(role);
  return true;
}
