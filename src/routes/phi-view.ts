import type { components } from '../generated/openapi.js';
import type { PolicyHolderJson } from '../db/tables/clinical.js';
import type { Principal } from '../gateway/principal.js';
import type { PseudonymService } from '../gateway/pseudonyms.js';
import { birthYear, dateToYear, instantToYear, zip3 } from '../domain/deidentify.js';
import { PlatformError } from '../errors/platform-error.js';

type PolicyHolder = components['schemas']['PolicyHolder'];

/** What the PHI helpers need of a request context. */
export interface SessionContext {
  principal: Principal;
  pseudonyms: PseudonymService;
}

/**
 * How one response shows patient data: as stored in a phi session, reduced per HIPAA Safe Harbor in a
 * no_phi session (openapi.json info.description), with patient ids replaced by surrogate handles.
 */
export interface PhiView {
  readonly noPhi: boolean;
  patientId(id: string | null): string | null;
  instant(value: Date): string;
  instant(value: Date | null): string | null;
  date(value: string): string;
  date(value: string | null): string | null;
  zip(value: string | null): string | null;
  /** Names, free text and identifying numbers: as stored, or null in no_phi. */
  identifying<T>(value: T | null): T | null;
}

const isId = (id: string | null): id is string => id !== null;
const asStored = <T>(value: T): T => value;

/** A phi session sees everything as stored: one shared view, nothing built per request. */
const PHI_VIEW: PhiView = {
  noPhi: false,
  patientId: asStored,
  instant: ((value: Date | null) => value?.toISOString() ?? null) as PhiView['instant'],
  date: asStored as PhiView['date'],
  zip: asStored,
  identifying: asStored,
};

/** The view for a response about these patients: one handle lookup for the whole page. */
export async function phiView(ctx: SessionContext, patientIds: readonly (string | null)[]): Promise<PhiView> {
  if (ctx.principal.phiMode !== 'no_phi') return PHI_VIEW;
  const handles = await ctx.pseudonyms.handlesFor(ctx.principal.agencyId, 'patient', patientIds.filter(isId));
  return {
    noPhi: true,
    patientId: (id) => (id === null ? null : handles.get(id)!),
    instant: instantToYear,
    date: dateToYear,
    zip: zip3,
    identifying: () => null,
  };
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

/** The real patient id behind a `patient_id` filter; a no_phi session can only send a handle of its agency. */
export async function patientIdFilter(ctx: SessionContext, sent: string | undefined): Promise<string | undefined> {
  if (sent === undefined || ctx.principal.phiMode !== 'no_phi') return sent;
  return ctx.pseudonyms.resolve(ctx.principal.agencyId, 'patient', sent);
}

/**
 * A policy holder is a relative or household member of the patient, so no_phi reduces their data like
 * the patient's: no names or street lines or city, ZIP to three digits, birth date to the year (withheld past 89).
 */
export function policyHolderFor(view: PhiView, holder: PolicyHolderJson | null): PolicyHolder | null {
  if (!holder || !view.noPhi) return holder;
  const year = birthYear(holder.dob, new Date());
  return {
    relationship_to_insured: holder.relationship_to_insured,
    first_name: null,
    middle_name: null,
    last_name: null,
    suffix: null,
    dob: year === null ? null : `${year}-01-01`,
    gender: holder.gender,
    address: { line1: null, line2: null, city: null, state: holder.address.state, zip_code: zip3(holder.address.zip_code) },
  };
}
