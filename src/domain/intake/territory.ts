import type { ServiceLine } from '../../db/tables/tenant-row.js';
import type { ServiceZip } from './service-address.js';

type DeclineReason = 'out_of_area' | 'service_line_not_offered';

interface Decline {
  reason: DeclineReason;
  detail: string;
}

export interface Routing {
  /** The office serving the ZIP; null out of area or without a ZIP. */
  officeId: string | null;
  decline: Decline | null;
}

const OFFERED_SERVICE_LINES: readonly ServiceLine[] = ['home_health', 'hospice', 'private_duty'];

export function isOfferedServiceLine(serviceLine: string): serviceLine is ServiceLine {
  return (OFFERED_SERVICE_LINES as readonly string[]).includes(serviceLine);
}

function declineFor(serviceLine: string, zip: ServiceZip | null, officeId: string | null): Decline | null {
  if (!isOfferedServiceLine(serviceLine)) {
    return {
      reason: 'service_line_not_offered',
      detail: `Service line "${serviceLine}" is not offered; the agency offers ${OFFERED_SERVICE_LINES.join(', ')}.`,
    };
  }
  if (zip && !officeId)
    return { reason: 'out_of_area', detail: `ZIP ${zip.zip5} is outside the agency's service area.` };
  return null;
}

/**
 * Territory rule: the ZIP's five digits pick the office from the agency's service area (`officeId`, null when the
 * area does not have it). A service line the agency does not offer, or a ZIP outside the area, declines the lead
 * (it is still recorded). Without a ZIP the lead is accepted unrouted, and the intake asks for the ZIP.
 */
export function routeReferral(serviceLine: string, zip: ServiceZip | null, officeId: string | null): Routing {
  return { officeId, decline: declineFor(serviceLine, zip, officeId) };
}
