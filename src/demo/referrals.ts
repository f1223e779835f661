import type { DocumentKind, ReferralSourceType } from '../db/tables/agency-directory.js';
import type { ServiceLine } from '../db/tables/tenant-row.js';
import type { IntakeStatus } from '../resources/intakes/intake-tables.js';
import type { PatientStatus } from '../resources/patients/patient-tables.js';
import type { ReferralTypeCategory } from '../resources/referrals/referral-tables.js';
import { addMinutes, dayStart, isoDay, laterThan, minDate } from './calendar.js';
import { SERVICE_LINE_ORDER, type Chart, type ChartContext } from './charts.js';
import { hasDependentCoverage, pendingCoverages, type CoverageDraft } from './coverages.js';
import type { Draft, Drafts } from './drafts.js';
import { placeOf } from './geography.js';
import { displayName, gender, personName } from './people.js';
import type { Random, Weights } from './random.js';
import type { UserRef } from './reference-data.js';
import { DIAGNOSES } from './vocabulary.js';

/** What a referral is about: a chart, or a lead that never became one. */
interface Lead {
  patientId: string | null;
  displayName: string;
  line: ServiceLine;
  zip: string;
  officeId: string | null;
  referredAt: Date;
  physicianId: string | null;
  coverages: CoverageDraft[];
}

interface Decision {
  referralType: string;
  intakeStatus: IntakeStatus;
  decline: { reason: string; detail: string } | null;
}

export interface ReferralIds {
  referralId: string;
  intakeId: string;
}

const ADMITTED: Weights<IntakeStatus> = { admitted: 1 };

/** Where the intake stands, given what became of the chart. */
const INTAKE_STATUS: Record<PatientStatus, Weights<IntakeStatus>> = {
  referred: { pending_review: 40, in_review: 30, awaiting_information: 30 },
  pending_admission: { accepted: 1 },
  active: ADMITTED,
  on_hold: ADMITTED,
  discharged: ADMITTED,
  deceased: ADMITTED,
  non_admit: { non_admit: 50, declined: 30, cancelled: 20 },
};

/** In-area leads the pipeline turns down, with the detail a coordinator would read. */
const IN_AREA_DECLINES: readonly NonNullable<Decision['decline']>[] = [
  { reason: 'payor_not_accepted', detail: 'Primary payor is not contracted with the agency.' },
  { reason: 'no_clinician_capacity', detail: 'No clinician capacity for the requested start of care.' },
  { reason: 'service_not_offered', detail: 'Requested services are not offered from the routing office.' },
];

/** Referral types as senders write them; anything but soc and roc is kept as sent and read as other. */
const INITIAL_REFERRAL_TYPES: Weights<string> = { soc: 90, transfer: 4, evaluation_only: 3, readmission: 3 };

/** Showcase charts take the intake statuses in turn (one per service line), the others draw them. */
export function chartDecision(rng: Random, chart: Chart): Decision {
  const choices = INTAKE_STATUS[chart.status];
  const inTurn = Object.keys(choices) as IntakeStatus[];
  const intakeStatus = chart.showcase
    ? inTurn[SERVICE_LINE_ORDER.indexOf(chart.line) % inTurn.length]
    : rng.weighted(choices);
  const referralType = rng.weighted(INITIAL_REFERRAL_TYPES);
  return { referralType, intakeStatus, decline: intakeStatus === 'declined' ? rng.pick(IN_AREA_DECLINES) : null };
}

export function chartLead(chart: Chart, coverages: CoverageDraft[]): Lead {
  return {
    patientId: chart.patient.id,
    displayName: chart.displayName,
    line: chart.line,
    zip: chart.place.zip,
    officeId: chart.place.officeId,
    referredAt: chart.timeline.referredAt,
    physicianId: chart.patient.primary_physician_id ?? null,
    coverages,
  };
}

const OUT_OF_AREA_LINES: Weights<ServiceLine> = { home_health: 70, hospice: 20, private_duty: 10 };

/** A lead from outside the service area: recorded, declined, never charted. */
export function outOfAreaLead(ctx: ChartContext, zips: readonly string[]): { lead: Lead; decision: Decision } {
  const { rng, now } = ctx;
  const zip = rng.pick(zips);
  const lead: Lead = {
    patientId: null,
    displayName: displayName(personName(rng, gender(rng))),
    line: rng.weighted(OUT_OF_AREA_LINES),
    zip,
    officeId: null,
    referredAt: addMinutes(now, -rng.int(60, 365 * 1440)),
    physicianId: rng.pick(ctx.reference.physicians).id,
    coverages: [],
  };
  const detail = `ZIP ${zip} (${placeOf(zip).city}, ${placeOf(zip).state}) is outside the agency's service area.`;
  return {
    lead,
    decision: { referralType: 'soc', intakeStatus: 'declined', decline: { reason: 'out_of_area', detail } },
  };
}

function categoryOf(referralType: string): ReferralTypeCategory {
  return referralType === 'soc' || referralType === 'roc' ? referralType : 'other';
}

/** Referral, intake, documents and links, added to `drafts`. Thin-shape senders send none of the newer fields. */
export function addReferral(ctx: ChartContext, drafts: Drafts, lead: Lead, decision: Decision): ReferralIds {
  const { rng } = ctx;
  const thin = rng.chance(0.15);
  const referral = referralRow(ctx, lead, decision, thin);
  drafts.referrals.push(referral);
  drafts.intakes.push(intakeRow(ctx, lead, decision, { referral, thin }));
  if (!thin) addDocuments(rng, drafts, referral);
  return { referralId: referral.id, intakeId: referral.intake_id };
}

type ReferralDraft = Draft<'referrals'> & { id: string; created_at: Date; referral_date: Date };

function referralRow(ctx: ChartContext, lead: Lead, decision: Decision, thin: boolean): ReferralDraft {
  const { rng, reference } = ctx;
  const created_at = addMinutes(lead.referredAt, rng.int(1, 30));
  return {
    id: rng.id('ref'),
    intake_id: rng.id('int'),
    patient_id: lead.patientId,
    patient_display_name: lead.displayName,
    service_line: lead.line,
    referral_type: decision.referralType,
    referral_type_category: categoryOf(decision.referralType),
    referral_date: lead.referredAt,
    payor_id: lead.coverages[0]?.payor_id ?? null,
    ...marketerFields(rng, reference.marketers),
    zip_code: lead.zip,
    office_id: lead.officeId,
    disposition: decision.decline ? 'declined' : 'accepted',
    decline_reason: decision.decline?.reason ?? null,
    decline_detail: decision.decline?.detail ?? null,
    request_shape: thin ? '2026-04-01' : '2026-08-19',
    ...(thin
      ? { referral_source: rng.pick(reference.sources).name, additional_fields: '{}' }
      : currentShapeFields(ctx, lead)),
    created_at,
    updated_at: created_at,
  };
}

/** Most leads name their marketer's user id; some senders only know the name; some have no marketer. */
function marketerFields(
  rng: Random,
  marketers: readonly UserRef[],
): { marketer_id: string | null; marketer_label: string | null } {
  const marketer = rng.maybe(0.85, () => rng.pick(marketers));
  const labelOnly = rng.chance(0.12);
  return {
    marketer_id: marketer && !labelOnly ? marketer.id : null,
    marketer_label: marketer && labelOnly ? marketer.name : null,
  };
}

const FACILITIES: readonly ReferralSourceType[] = ['skilled_nursing_facility', 'assisted_living_facility'];

const SOURCE_SYSTEMS: Weights<string> = { hospital_ehr_hub: 40, referral_portal: 30, fax_intake: 20, crm_sync: 10 };

const EXTRA_PROPERTIES: readonly Record<string, unknown>[] = [
  { preferred_language: 'Spanish' },
  { isolation_precautions: 'contact' },
  { caregiver: { relationship: 'daughter', lives_with_patient: true } },
  { pharmacy_name: 'Main Street Pharmacy' },
  { code_status: 'DNR', advance_directive_on_file: true },
];

function currentShapeFields(ctx: ChartContext, lead: Lead): Partial<ReferralDraft> {
  const { rng, reference } = ctx;
  const source = rng.maybe(0.9, () => rng.pick(reference.sources));
  const hospital = source?.type === 'hospital' ? rng.pick(reference.hospitals) : null;
  const namedOnly = rng.chance(0.1);
  const system = rng.weighted(SOURCE_SYSTEMS);
  return {
    referral_source: source?.name ?? rng.pick(['Daughter called in', 'Community health fair', 'Walk-in']),
    referral_source_id: source?.id ?? null,
    referring_facility: hospital?.name ?? (source && FACILITIES.includes(source.type) ? source.name : null),
    hospital_id: hospital?.id ?? null,
    referring_physician: namedOnly ? rng.pick(reference.physicians).name : null,
    referring_physician_id: namedOnly ? null : lead.physicianId,
    signing_physician_id: lead.physicianId,
    certifying_physician_id: lead.line === 'hospice' ? rng.pick(reference.physicians).id : lead.physicianId,
    source_system: system,
    external_reference_id: `${system.slice(0, 3).toUpperCase()}-${lead.referredAt.getUTCFullYear()}-${rng.digits(6)}`,
    additional_fields: JSON.stringify(rng.chance(0.2) ? rng.pick(EXTRA_PROPERTIES) : {}),
  };
}

const UNDER_REVIEW: readonly IntakeStatus[] = ['pending_review', 'in_review', 'awaiting_information'];
const MISSING_INFORMATION = [
  'signed_face_to_face',
  'history_and_physical',
  'medication_list',
  'insurance_card',
  'physician_order',
];
const NOTES = [
  'Family requests morning visits.',
  'Lives alone; neighbor has a key.',
  'Wound care supplies delivered to the home.',
  'Patient uses a walker; two steps at the entrance.',
  'Daughter is the primary contact for scheduling.',
];
const INSURANCE_NOTES = [
  'Secondary Medicaid application pending.',
  'Verify Medicare Advantage authorization before start of care.',
  'Spouse is the policy holder; confirm date of birth.',
];

function intakeRow(
  ctx: ChartContext,
  lead: Lead,
  decision: Decision,
  r: { referral: ReferralDraft; thin: boolean },
): Draft<'intakes'> {
  const { rng, reference } = ctx;
  const status = decision.intakeStatus;
  const holderNameMissing =
    !r.thin && hasDependentCoverage(lead.coverages) && UNDER_REVIEW.includes(status) && rng.chance(0.5);
  return {
    id: r.referral.intake_id,
    referral_id: r.referral.id,
    status,
    reviewer_id:
      status === 'pending_review' || decision.decline?.reason === 'out_of_area'
        ? null
        : rng.pick(reference.reviewers).id,
    missing_information: missingInformation(rng, status, holderNameMissing),
    insurance: JSON.stringify(
      r.thin ? [] : pendingCoverages(lead.coverages, status === 'accepted' || status === 'admitted', holderNameMissing),
    ),
    insurance_notes: r.thin ? null : rng.maybe(0.15, () => rng.pick(INSURANCE_NOTES)),
    diagnoses: JSON.stringify(r.thin ? [] : diagnoses(rng, lead.line)),
    custom_data: JSON.stringify(r.thin || !rng.chance(0.3) ? {} : customData(rng)),
    notes: r.thin ? null : rng.maybe(0.4, () => rng.pick(NOTES)),
    received_at: r.referral.created_at,
    created_at: r.referral.created_at,
    updated_at:
      status === 'pending_review'
        ? r.referral.created_at
        : laterThan(rng, r.referral.created_at, minDate(addMinutes(r.referral.created_at, 5 * 1440), ctx.now)),
  };
}

/** The pipeline itself asks for a dependent's policy holder name; reviewers ask for the rest. */
function missingInformation(rng: Random, status: IntakeStatus, holderNameMissing: boolean): string[] {
  const asked = status === 'awaiting_information' ? rng.sample(MISSING_INFORMATION, rng.int(1, 3)) : [];
  return holderNameMissing ? [...asked, 'policy_holder_name'] : asked;
}

function diagnoses(rng: Random, line: ServiceLine): { code: string; description: string; is_primary: boolean }[] {
  return rng.sample(DIAGNOSES[line], rng.int(1, 4)).map((diagnosis, i) => ({ ...diagnosis, is_primary: i === 0 }));
}

const LANGUAGES: Weights<string> = { English: 80, Spanish: 12, Vietnamese: 4, Mandarin: 4 };

function customData(rng: Random): Record<string, string | boolean> {
  return {
    preferred_language: rng.weighted(LANGUAGES),
    fall_risk: rng.chance(0.6),
    caregiver_present: rng.chance(0.7),
  };
}

const DOCUMENT_COUNTS: Weights<string> = { 0: 20, 1: 35, 2: 30, 3: 15 };
const DOCUMENT_KINDS: readonly DocumentKind[] = [
  'face_to_face',
  'history_and_physical',
  'medication_list',
  'insurance_card',
  'discharge_summary',
  'physician_order',
];

function addDocuments(rng: Random, drafts: Drafts, referral: ReferralDraft): void {
  const count = Number(rng.weighted(DOCUMENT_COUNTS));
  const kinds: DocumentKind[] = count === 0 ? [] : ['referral_packet', ...rng.sample(DOCUMENT_KINDS, count - 1)];
  for (const [position, kind] of kinds.entries()) {
    const image = kind === 'insurance_card';
    const uploaded_at = addMinutes(referral.referral_date, -rng.int(5, 600));
    const document: Draft<'documents'> = {
      id: rng.id('doc'),
      kind,
      file_name: image ? 'insurance_card_front.jpg' : `${kind}_${isoDay(uploaded_at).replaceAll('-', '')}.pdf`,
      content_type: image ? 'image/jpeg' : 'application/pdf',
      size_bytes: rng.int(image ? 150_000 : 80_000, image ? 2_000_000 : 4_000_000),
      uploaded_at,
      created_at: uploaded_at,
      updated_at: uploaded_at,
    };
    drafts.documents.push(document);
    drafts.referral_documents.push({
      referral_id: referral.id,
      document_id: document.id,
      position,
      created_at: referral.created_at,
    });
  }
}

/** A hospital stay interrupted care: the resumption referral arrives the day before the patient is back. */
export function resumptionDecision(chart: Chart): { decision: Decision; referredAt: Date } | null {
  if (!chart.timeline.resumedOn) return null;
  return {
    decision: { referralType: 'roc', intakeStatus: 'admitted', decline: null },
    referredAt: addMinutes(dayStart(chart.timeline.resumedOn), -20 * 60),
  };
}
