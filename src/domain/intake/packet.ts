import type { components } from '../../generated/openapi.js';
import { requestShapeOf, type RequestShape } from './request-shape.js';
import { patientName, type PatientName } from './patient-name.js';
import { parseServiceAddress, serviceZip, type ServiceAddress, type ServiceZip } from './service-address.js';
import { pendingInsurance, type PendingInsurance } from './coverage.js';
import { intakeDiagnoses, type IntakeDiagnoses } from './diagnoses.js';
import { checkDob } from './identity.js';

export type ReferralCreateRequest = components['schemas']['ReferralCreateRequest'];

/** Everything the pure rules read from the body, refused before any lookup when a rule fails. */
export interface Packet {
  body: ReferralCreateRequest;
  shape: RequestShape;
  name: PatientName;
  address: ServiceAddress | null;
  zip: ServiceZip | null;
  insurance: PendingInsurance;
  diagnoses: IntakeDiagnoses;
}

export function readPacket(body: ReferralCreateRequest, now: Date): Packet {
  const name = patientName(body);
  checkDob(body.patient_dob, now);
  const address = parseServiceAddress(body.patient_address);
  const zip = serviceZip(body, address);
  return {
    body,
    shape: requestShapeOf(body),
    name,
    address,
    zip,
    insurance: pendingInsurance(body),
    diagnoses: intakeDiagnoses(body.diagnoses),
  };
}
