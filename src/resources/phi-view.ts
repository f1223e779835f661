import type { TenantStore } from '../db/tenant-store.js';
import { PlatformError } from '../shared/platform-error.js';

/**
 * What a no_phi session sends: dates at year boundaries. The handles it sends in paths, filters and bodies are
 * resolved, and what it receives is reduced, in one place, the gateway, from the contract's x-svc-phi marks
 * (src/gateway/core/handle-parameters.ts, src/domain/no-phi-reduction.ts).
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
