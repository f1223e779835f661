import type { ServiceLine } from '../db/tables/tenant-row.js';
import type { EpisodeType, PatientStatus } from '../resources/patients/patient-tables.js';
import { patientMatchKeys } from '../db/patient-match-keys.js';
import { addDays, addMinutes, dayStart, isoDay, laterThan, minDate } from './calendar.js';
import type { Draft } from './drafts.js';
import { coordinatesNear } from './geography.js';
import { birthDate, displayName, fictionalPhone, gender, personName, streetAddress } from './people.js';
import type { Random, Weights } from './random.js';
import type { ReferenceData } from './reference-data.js';
import type { ServiceArea, ServiceZip } from './service-area.js';

/** The dates a chart's story hangs on. Days are 'YYYY-MM-DD'. */
interface Timeline {
  referredAt: Date;
  /** Start of care: past for admitted patients, planned for pending admissions. */
  admittedOn: string | null;
  /** Discharge or death. */
  endedOn: string | null;
  /** On-hold patients: the day care was suspended (an inpatient stay). */
  heldSince: string | null;
  /** Some active home health patients came back from a hospital stay on this day. */
  resumedOn: string | null;
}

export interface Chart {
  patient: Draft<'patients'> & { id: string; created_at: Date };
  line: ServiceLine;
  status: PatientStatus;
  place: ServiceZip;
  timeline: Timeline;
  episodes: (Draft<'episodes'> & { id: string })[];
  displayName: string;
  /** One of the first charts, one per service line and status, drawn to show its whole story (see SHOWCASE). */
  showcase: boolean;
}

export interface ChartContext {
  rng: Random;
  now: Date;
  area: ServiceArea;
  reference: ReferenceData;
}

const SERVICE_LINES: Weights<ServiceLine> = { home_health: 60, hospice: 25, private_duty: 15 };

/**
 * Two years of charts: most are closed, about one in ten is on service (a home health stay lasts about
 * two months, so an agency taking 50,000 charts a year has a census near a tenth of them).
 */
const STATUSES: Record<ServiceLine, Weights<PatientStatus>> = {
  home_health: { referred: 3, pending_admission: 2, active: 9, on_hold: 1, discharged: 69, deceased: 4, non_admit: 12 },
  hospice: { referred: 3, pending_admission: 2, active: 10, on_hold: 1, discharged: 10, deceased: 62, non_admit: 12 },
  private_duty: {
    referred: 3,
    pending_admission: 3,
    active: 15,
    on_hold: 2,
    discharged: 65,
    deceased: 3,
    non_admit: 9,
  },
};

export const SERVICE_LINE_ORDER = Object.keys(SERVICE_LINES) as ServiceLine[];

/** Every service line in every status comes first, so even a small agency shows them all. */
const EVERY_COMBINATION = SERVICE_LINE_ORDER.flatMap((line) =>
  (Object.keys(STATUSES[line]) as PatientStatus[]).map((status) => ({ line, status })),
);

const AGE_RANGE: Record<ServiceLine, [number, number]> = {
  home_health: [62, 99],
  hospice: [58, 103],
  private_duty: [28, 98],
};

export function buildChart(ctx: ChartContext, index: number): Chart {
  const { rng } = ctx;
  const showcase = index < EVERY_COMBINATION.length;
  const line = showcase ? EVERY_COMBINATION[index].line : rng.weighted(SERVICE_LINES);
  const status = showcase ? EVERY_COMBINATION[index].status : rng.weighted(STATUSES[line]);
  const place = rng.pick(ctx.area.zips);
  const timeline = buildTimeline(rng, ctx.now, { line, status, showcase });
  const patient = patientRow(ctx, index, { line, status, place, timeline });
  const episodes = buildEpisodes(rng, ctx.now, patient.id, line, status, timeline);
  return { patient, line, status, place, timeline, episodes, displayName: displayName(patient), showcase };
}

function patientRow(
  ctx: ChartContext,
  index: number,
  c: Pick<Chart, 'line' | 'status' | 'place' | 'timeline'>,
): Chart['patient'] {
  const { rng, now } = ctx;
  const sex = gender(rng);
  const name = personName(rng, sex);
  const primary_phone = rng.chance(0.95) ? fictionalPhone(rng, c.place.areaCode) : null;
  const alt_phone = rng.maybe(0.4, () => fictionalPhone(rng, c.place.areaCode));
  const address = streetAddress(rng);
  const created_at = addMinutes(c.timeline.referredAt, rng.int(2, 90));
  const lastEvent = c.timeline.endedOn ? addDays(dayStart(c.timeline.endedOn), 1) : created_at;
  return {
    id: rng.id('pat'),
    mrn: `M${String(100_001 + index).padStart(7, '0')}`,
    ...name,
    dob: birthDate(rng, now, ...AGE_RANGE[c.line]),
    gender: sex,
    primary_phone,
    alt_phone,
    preferred_phone: alt_phone && rng.chance(0.3) ? 'alternate' : primary_phone ? 'primary' : null,
    address_line_1: address.line1,
    address_line_2: address.line2,
    city: c.place.city,
    state: c.place.state,
    zip_code: c.place.zip,
    ...coordinatesNear(c.place, rng),
    office_id: c.place.officeId,
    service_line: c.line,
    status: c.status,
    primary_physician_id: rng.maybe(0.92, () => rng.pick(ctx.reference.physicians).id),
    ...patientMatchKeys({ ...name, primary_phone }),
    created_at,
    updated_at: laterThan(rng, lastEvent < now ? lastEvent : created_at, now),
  };
}

/** Days since start of care for patients still on service, and length of stay for those who left. */
const DAYS_ON_SERVICE: Record<ServiceLine, [number, number]> = {
  home_health: [0, 170],
  hospice: [0, 400],
  private_duty: [0, 700],
};
const DAYS_SINCE_DISCHARGE: [number, number] = [1, 700];
const LENGTH_OF_STAY: Record<ServiceLine, [number, number]> = {
  home_health: [14, 120],
  hospice: [2, 180],
  private_duty: [30, 400],
};

/**
 * Showcase charts keep their story inside the visit window: admitted 45-55 days ago (so start of care is
 * past and the day-60 recertification ahead), discharged within the last month, back from a hospital stay.
 */
const SHOWCASE_DAYS_ON_SERVICE: [number, number] = [45, 55];
const SHOWCASE_DAYS_SINCE_DISCHARGE: [number, number] = [1, 30];

function buildTimeline(
  rng: Random,
  now: Date,
  { line, status, showcase }: Pick<Chart, 'line' | 'status' | 'showcase'>,
): Timeline {
  const daysAgo = (min: number, max: number) => addMinutes(now, -rng.int(min * 1440, max * 1440));
  const timeline: Timeline = { referredAt: now, admittedOn: null, endedOn: null, heldSince: null, resumedOn: null };
  if (status === 'referred') timeline.referredAt = daysAgo(0.1, 4);
  if (status === 'non_admit') timeline.referredAt = daysAgo(3, 365);
  if (status === 'pending_admission') {
    timeline.referredAt = daysAgo(1, 6);
    timeline.admittedOn = isoDay(addDays(now, rng.int(1, 5)));
  }
  if (status === 'active' || status === 'on_hold') {
    timeline.admittedOn = isoDay(daysAgo(...(showcase ? SHOWCASE_DAYS_ON_SERVICE : DAYS_ON_SERVICE[line])));
    if (status === 'on_hold') timeline.heldSince = isoDay(daysAgo(0, 10));
    if (status === 'active' && line === 'home_health')
      timeline.resumedOn = rng.maybe(showcase ? 1 : 0.12, () => isoDay(daysAgo(1, 40)));
  }
  if (status === 'discharged' || status === 'deceased') {
    const ended = daysAgo(...(showcase ? SHOWCASE_DAYS_SINCE_DISCHARGE : DAYS_SINCE_DISCHARGE));
    timeline.endedOn = isoDay(ended);
    timeline.admittedOn = isoDay(addDays(ended, -rng.int(...LENGTH_OF_STAY[line])));
  }
  if (timeline.admittedOn && status !== 'pending_admission') {
    timeline.referredAt = addMinutes(dayStart(timeline.admittedOn), -rng.int(1 * 1440, 3 * 1440));
  }
  keepAfterAdmission(timeline);
  return timeline;
}

/** A hold or resumption drawn before the start of care would be impossible: drop it. */
function keepAfterAdmission(timeline: Timeline): void {
  const admitted = timeline.admittedOn ?? '';
  if (timeline.heldSince && timeline.heldSince <= admitted) timeline.heldSince = null;
  if (timeline.resumedOn && timeline.resumedOn <= admitted) timeline.resumedOn = null;
}

const PLANNING_DAYS = 60;

const EPISODE: Record<ServiceLine, { type: EpisodeType; lengths: number[] }> = {
  // PDGM pays home health in 30-day periods.
  home_health: { type: 'home_health_period', lengths: [30] },
  // Hospice benefit: two 90-day periods, then unlimited 60-day periods.
  hospice: { type: 'hospice_benefit_period', lengths: [90, 90, 60] },
  private_duty: { type: 'private_duty_authorization', lengths: [90] },
};

/**
 * Consecutive periods from start of care until discharge, or through today (the current one active);
 * active patients also have the periods of the next two months planned.
 */
function buildEpisodes(
  rng: Random,
  now: Date,
  patientId: string,
  line: ServiceLine,
  status: PatientStatus,
  timeline: Timeline,
): Chart['episodes'] {
  if (!timeline.admittedOn) return [];
  const { type, lengths } = EPISODE[line];
  const today = isoDay(now);
  const last = timeline.endedOn ?? (status === 'active' ? isoDay(addDays(now, PLANNING_DAYS)) : today);
  const episodes: Chart['episodes'] = [];
  for (let start = timeline.admittedOn, n = 0; n === 0 || start <= last; n++) {
    const fullEnd = isoDay(addDays(dayStart(start), lengths[Math.min(n, lengths.length - 1)] - 1));
    const end_date = timeline.endedOn && fullEnd > timeline.endedOn ? timeline.endedOn : fullEnd;
    const episodeStatus = start > today ? 'planned' : timeline.endedOn || end_date < today ? 'closed' : 'active';
    // Periods planned ahead were opened before now, not on their first day.
    const created_at = minDate(
      addMinutes(dayStart(start), -rng.int(60, 2 * 1440)),
      addMinutes(now, -rng.int(60, 1440)),
    );
    const updated_at = episodeStatus === 'closed' ? addDays(dayStart(end_date), 1) : created_at;
    episodes.push({
      id: rng.id('epi'),
      patient_id: patientId,
      type,
      status: episodeStatus,
      start_date: start,
      end_date,
      created_at,
      updated_at,
    });
    start = isoDay(addDays(dayStart(end_date), 1));
  }
  return episodes;
}
