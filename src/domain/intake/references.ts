import type { components } from '../../generated/openapi.js';
import { PlatformError } from '../../shared/platform-error.js';
import type { AgencyResourceKind } from '../../db/agency-resources.js';

type ReferralCreateRequest = components['schemas']['ReferralCreateRequest'];

type ReferenceKind = Extract<
  AgencyResourceKind,
  'patient' | 'referral_source' | 'physician' | 'payor' | 'hospital' | 'agency_user' | 'document'
>;

/** An id the request names, which must be a row of `kind` in the caller's agency. */
export interface ReferenceCheck {
  field: string;
  kind: ReferenceKind;
  id: string;
}

const ID_FIELDS = {
  referral_source_id: 'referral_source',
  referring_physician_id: 'physician',
  signing_physician_id: 'physician',
  certifying_physician_id: 'physician',
  payor_id: 'payor',
  hospital_id: 'hospital',
  marketer_id: 'agency_user',
} as const satisfies Partial<Record<keyof ReferralCreateRequest, ReferenceKind>>;

function documentChecks(documentIds: string[] = []): ReferenceCheck[] {
  const repeated = documentIds.findIndex((id, i) => documentIds.indexOf(id) !== i);
  if (repeated >= 0) {
    throw new PlatformError('PLATFORM_INVALID_INPUT', `document_ids lists ${documentIds[repeated]} twice.`, {
      field: `document_ids[${repeated}]`,
      id: documentIds[repeated],
    });
  }
  return documentIds.map((id, i) => ({ field: `document_ids[${i}]`, kind: 'document', id }));
}

/** Every id of the request to look up, in the order of the fields. */
export function referencesOf(body: ReferralCreateRequest): ReferenceCheck[] {
  const checks: ReferenceCheck[] = Object.entries(ID_FIELDS).flatMap(([field, kind]) => {
    const id = body[field as keyof typeof ID_FIELDS];
    return id === undefined ? [] : [{ field, kind, id }];
  });
  const insurancePayor = typeof body.insurance === 'object' ? body.insurance.payor_id : undefined;
  if (insurancePayor !== undefined) checks.push({ field: 'insurance.payor_id', kind: 'payor', id: insurancePayor });
  return [...checks, ...documentChecks(body.document_ids)];
}

const KIND_LABEL: Record<ReferenceKind, string> = {
  patient: 'patient',
  referral_source: 'referral source',
  physician: 'physician',
  payor: 'payor',
  hospital: 'hospital',
  agency_user: 'user',
  document: 'document',
};

/** Ids of another agency are refused exactly like unknown ones: a 400 naming the first such field. */
export function unknownReferencesError(unknown: ReferenceCheck[]): PlatformError {
  const listed = unknown.map((c) => `${c.field} (no ${KIND_LABEL[c.kind]} ${c.id} in this agency)`).join('; ');
  return new PlatformError('PLATFORM_INVALID_INPUT', `Unknown ids: ${listed}.`, {
    field: unknown[0].field,
    id: unknown[0].id,
  });
}
