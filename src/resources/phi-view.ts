import type { Principal } from '../shared/principal.js';
import type { PseudonymService } from '../db/pseudonyms.js';
import { PlatformError } from '../shared/platform-error.js';

/**
 * What a no_phi session sends: patient handles in paths and filters, and dates at year boundaries. What it receives is
 * reduced in one place, the gateway, from the contract's x-svc-phi marks (src/gateway/no-phi-reduction.ts).
 */
export interface SessionContext {
  principal: Principal;
  pseudonyms: PseudonymService;
}

/**
 * A date filter of a no_phi session may only cut at a year boundary: a session that sees dates to the year
 * would otherwise learn a row's day by narrowing the window. `boundary` is the year boundary nearest the bound,
 * written as the bound is (the bound is refused unless it equals it).
 */
export function checkYearBoundary(ctx: SessionContext, field: string, bound: string, boundary: string): void {
  if (ctx.principal.phiMode !== 'no_phi' || bound === boundary) return;
  throw new PlatformError('PLATFORM_INVALID_INPUT', `In a no_phi session dates are known to the year only: ${field} must be a year boundary, such as ${boundary}.`, { field });
}

/** The real patient id behind a `patient_id` filter or path; a no_phi session can only send a handle of its agency. */
export async function patientIdFilter(ctx: SessionContext, sent: string | undefined): Promise<string | undefined> {
  if (sent === undefined || ctx.principal.phiMode !== 'no_phi') return sent;
  return ctx.pseudonyms.resolve(ctx.principal.agencyId, 'patient', sent);
}
