import type { Insertable } from 'kysely';
import type { ServiceLine } from '../../db/tables/tenant-row.js';
import type { IntakesTable } from '../../resources/intakes/intake-tables.js';
import type { PatientsTable } from '../../resources/patients/patient-tables.js';
import type { ReferralsTable, ReferralTypeCategory } from '../../resources/referrals/referral-tables.js';
import { patientMatchKeys } from '../../db/patient-match-keys.js';
import { additionalFields } from './request-shape.js';
import type { Packet } from './packet.js';
import type { ChartRef } from './identity.js';
import type { Routing } from './territory.js';

type Generated = 'agency_id' | 'id' | 'created_at' | 'updated_at';
type NewChart = Omit<Insertable<PatientsTable>, Generated>;
type NewReferral = Omit<Insertable<ReferralsTable>, Generated | 'intake_id' | 'patient_id'>;
type NewIntake = Omit<Insertable<IntakesTable>, Generated | 'referral_id'>;

/** What the pipeline writes: a new chart, or the id of the chart it linked or matched (or neither, for a declined lead). */
export interface IntakeRecord {
  newChart: NewChart | null;
  chartId: string | null;
  referral: NewReferral;
  intake: NewIntake;
  documentIds: string[];
}

/** What the pipeline decided, from the agency's data. */
export interface Decision {
  routing: Routing;
  /** The chart linked by patient_id or found by the identity match. */
  chart: ChartRef | null;
  matched: boolean;
  /** The service line of a chart to open; null when none is opened. */
  newChartLine: ServiceLine | null;
  missing: string[];
}

/** soc and roc in any case; anything else (or nothing) is other, while the referral keeps the value as sent. */
function referralTypeCategory(referralType: string | undefined): ReferralTypeCategory {
  const category = referralType?.trim().toLowerCase();
  return category === 'soc' || category === 'roc' ? category : 'other';
}

function newChart({ body, name, address, zip }: Packet, serviceLine: ServiceLine, officeId: string | null): NewChart {
  const phone = body.patient_phone?.trim() || null;
  const coordinates = body.patient_coordinates;
  return {
    mrn: null,
    first_name: name.first_name,
    middle_name: name.middle_name,
    last_name: name.last_name,
    suffix: name.suffix,
    dob: body.patient_dob ?? null,
    gender: null,
    primary_phone: phone,
    alt_phone: body.patient_alt_phone?.trim() || null,
    preferred_phone: body.patient_preferred_phone ?? null,
    address_line_1: address?.address_line_1 ?? null,
    address_line_2: address?.address_line_2 ?? null,
    city: address?.city ?? null,
    state: address?.state ?? null,
    zip_code: zip?.zip_code ?? null,
    latitude: coordinates ? String(coordinates.latitude) : null,
    longitude: coordinates ? String(coordinates.longitude) : null,
    office_id: officeId,
    service_line: serviceLine,
    status: 'referred',
    primary_physician_id: null,
    ...patientMatchKeys({ first_name: name.first_name, last_name: name.last_name, primary_phone: phone }),
  };
}

function referralRow({ body, shape, name, zip, insurance }: Packet, routing: Routing, now: Date): NewReferral {
  return {
    patient_display_name: name.display_name,
    service_line: body.service_line,
    referral_type: body.referral_type ?? null,
    referral_type_category: referralTypeCategory(body.referral_type),
    referral_date: body.referral_date ?? now,
    referral_source: body.referral_source ?? null,
    referral_source_id: body.referral_source_id ?? null,
    referring_facility: body.referring_facility ?? null,
    referring_physician: body.referring_physician ?? null,
    referring_physician_id: body.referring_physician_id ?? null,
    signing_physician_id: body.signing_physician_id ?? null,
    certifying_physician_id: body.certifying_physician_id ?? null,
    payor_id: body.payor_id ?? insurance.coverages.find((c) => c.coverage_order === 0)?.payor_id ?? null,
    hospital_id: body.hospital_id ?? null,
    marketer_id: body.marketer_id ?? null,
    marketer_label: body.marketer_label ?? null,
    zip_code: zip?.zip_code ?? null,
    office_id: routing.officeId,
    disposition: routing.decline ? 'declined' : 'accepted',
    decline_reason: routing.decline?.reason ?? null,
    decline_detail: routing.decline?.detail ?? null,
    request_shape: shape,
    source_system: body.source_system ?? null,
    external_reference_id: body.external_reference_id ?? null,
    additional_fields: JSON.stringify(additionalFields(body)),
  };
}

function intakeRow({ body, insurance, diagnoses }: Packet, decision: Decision, now: Date): NewIntake {
  return {
    status: decision.routing.decline ? 'declined' : 'pending_review',
    reviewer_id: null,
    missing_information: decision.missing,
    insurance: JSON.stringify(insurance.coverages),
    insurance_notes: body.insurance_notes ?? null,
    diagnoses: JSON.stringify(diagnoses.diagnoses),
    custom_data: JSON.stringify(body.custom_data ?? {}),
    notes: body.notes ?? null,
    received_at: now,
  };
}

export function intakeRecord(packet: Packet, decision: Decision, now: Date): IntakeRecord {
  const { newChartLine, routing } = decision;
  return {
    newChart: newChartLine ? newChart(packet, newChartLine, routing.officeId) : null,
    chartId: decision.chart?.id ?? null,
    referral: referralRow(packet, routing, now),
    intake: intakeRow(packet, decision, now),
    documentIds: packet.body.document_ids ?? [],
  };
}
