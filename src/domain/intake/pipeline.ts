import type { components } from '../../generated/openapi.js';
import type { Deprecation } from '../../shared/versioning.js';
import { deprecationsOf } from './request-shape.js';
import { readPacket, type Packet, type ReferralCreateRequest } from './packet.js';
import { intakeRecord, type Decision, type IntakeRecord } from './records.js';
import { referencesOf, unknownReferencesError, type ReferenceCheck } from './references.js';
import { isOfferedServiceLine, routeReferral, type Routing } from './territory.js';
import { checkEpisodeReview, identityOf, type ChartRef, type PatientIdentity } from './identity.js';

type ReferralCreated = components['schemas']['ReferralCreated'];

/** The pipeline's lookups and its one write, all inside the command's transaction and the caller's agency. */
export interface IntakeStore {
  unknownReferences(checks: ReferenceCheck[]): Promise<ReferenceCheck[]>;
  /**
   * The office serving the ZIP (null outside the area, or without a ZIP). Given an identity, it also locks that
   * identity until the transaction ends, so that two concurrent referrals for one person open one chart: the second
   * waits here, and its chartByIdentity, which must come after, finds the first one's chart.
   */
  officeLockingIdentity(zip5: string | null, identity: PatientIdentity | null): Promise<string | null>;
  chartById(id: string): Promise<ChartRef | null>;
  chartByIdentity(identity: PatientIdentity): Promise<ChartRef | null>;
  record(record: IntakeRecord): Promise<RecordedIds>;
}

export interface RecordedIds {
  referralId: string;
  intakeId: string;
  /** The new, linked or matched chart; null for a declined lead without one. */
  patientId: string | null;
}

interface IntakeOutcome {
  created: ReferralCreated;
  deprecations: Deprecation[];
}

/** The identity to match on; none when patient_id names the chart. */
function identityToMatch({ body, name }: Packet): PatientIdentity | null {
  return body.patient_id === undefined ? identityOf(name, body.patient_dob, body.patient_phone) : null;
}

/** The chart the referral lands on: the one named by patient_id (it must be of this agency), else an identity match. */
async function existingChart(
  packet: Packet,
  identity: PatientIdentity | null,
  store: IntakeStore,
): Promise<{ chart: ChartRef | null; matched: boolean }> {
  const patientId = packet.body.patient_id;
  if (patientId !== undefined) {
    const chart = await store.chartById(patientId);
    if (!chart) throw unknownReferencesError([{ field: 'patient_id', kind: 'patient', id: patientId }]);
    return { chart, matched: false };
  }
  const chart = identity ? await store.chartByIdentity(identity) : null;
  return { chart, matched: chart !== null };
}

/** What the intake still asks for; a declined lead asks for nothing. */
function missingInformation({ zip, insurance, diagnoses }: Packet, routing: Routing): string[] {
  if (routing.decline) return [];
  return [...(zip ? [] : ['patient_zip_code']), ...insurance.missing, ...diagnoses.missing];
}

/** A declined lead opens no chart and skips the episode review: it changes nothing on a chart. */
async function decide(packet: Packet, store: IntakeStore): Promise<Decision> {
  const { body } = packet;
  const unknown = await store.unknownReferences(referencesOf(body));
  if (unknown.length > 0) throw unknownReferencesError(unknown);
  const identity = identityToMatch(packet);
  const routing = routeReferral(
    body.service_line,
    packet.zip,
    await store.officeLockingIdentity(packet.zip?.zip5 ?? null, identity),
  );
  const { chart, matched } = await existingChart(packet, identity, store);
  if (chart && !routing.decline) checkEpisodeReview(chart, body.existing_patient_episode_reviewed);
  const line = body.service_line;
  const newChartLine = !chart && !routing.decline && isOfferedServiceLine(line) ? line : null;
  return { routing, chart, matched, newChartLine, missing: missingInformation(packet, routing) };
}

function echo(
  packet: Packet,
  { routing, matched, newChartLine, missing }: Decision,
  ids: RecordedIds,
): ReferralCreated {
  return {
    referral_id: ids.referralId,
    intake_id: ids.intakeId,
    patient_id: ids.patientId,
    patient_created: newChartLine !== null,
    patient_matched: matched,
    disposition: routing.decline ? 'declined' : 'accepted',
    decline_reason: routing.decline?.reason ?? null,
    decline_detail: routing.decline?.detail ?? null,
    office_id: routing.officeId,
    request_shape: packet.shape,
    missing_information: missing,
  };
}

/**
 * The intake pipeline of `createReferral`: the pure rules (name, dob, ZIP, insurance, diagnoses), then the agency's
 * ids, territory and chart; a failing rule throws before anything is written, and the lead is recorded in one write.
 */
export async function runIntakePipeline(
  body: ReferralCreateRequest,
  store: IntakeStore,
  now: Date,
): Promise<IntakeOutcome> {
  const packet = readPacket(body, now);
  const decision = await decide(packet, store);
  const ids = await store.record(intakeRecord(packet, decision, now));
  return { created: echo(packet, decision, ids), deprecations: deprecationsOf(body, packet.shape) };
}
