import type { TenantStore } from '../db/tenant-store.js';
import { PlatformError } from '../shared/platform-error.js';
import type { PseudonymKind } from '../shared/ids.js';

/**
 * What a no_phi session sends: patient handles in paths and filters, and dates at year boundaries. What it receives is
 * reduced in one place, the gateway, from the contract's x-svc-phi marks (src/domain/no-phi-reduction.ts).
 */

/**
 * A date filter of a no_phi session may only cut at a year boundary: a session that sees dates to the year
 * would otherwise learn a row's day by narrowing the window. `boundary` is the year boundary nearest the bound,
 * written as the bound is (the bound is refused unless it equals it).
 */
export function checkYearBoundary(store: TenantStore, field: string, bound: string, boundary: string): void {
  if (store.phiMode !== 'no_phi' || bound === boundary) return;
  throw new PlatformError(
    'PLATFORM_INVALID_INPUT',
    `In a no_phi session dates are known to the year only: ${field} must be a year boundary, such as ${boundary}.`,
    { field },
  );
}

/** The real id behind an id filter, path or reference; a no_phi session can only send a handle of its agency. */
export async function realIdFilter(
  store: TenantStore,
  kind: PseudonymKind,
  sent: string | undefined,
): Promise<string | undefined> {
  if (sent === undefined || store.phiMode !== 'no_phi') return sent;
  return store.pseudonyms.resolve(kind, sent);
}

export function patientIdFilter(store: TenantStore, sent: string | undefined): Promise<string | undefined> {
  return realIdFilter(store, 'patient', sent);
}
