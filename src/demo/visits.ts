import type { Discipline, ServiceLine } from '../db/tables/tenant-row.js';
import type { DocumentationStatus, EvvStatus, VisitStatus, VisitType } from '../resources/visits/visit-tables.js';
import { addDays, addMinutes, DAY_MS, dayStart, isoDay, minDate, MINUTE_MS, zonedTime } from './calendar.js';
import type { Chart, ChartContext } from './charts.js';
import type { Draft } from './drafts.js';
import type { Random, Weights } from './random.js';
import type { UserRef } from './reference-data.js';

/** Visits are generated this many days either side of now. */
const VISIT_WINDOW_DAYS = 60;

interface Plan {
  discipline: Discipline;
  /** Share of the service line's patients who receive the discipline. */
  share: number;
  perWeek: number;
  minutes: number;
}

/** Typical orders by service line: frequencies per week and planned visit length. */
const PLANS: Record<ServiceLine, readonly Plan[]> = {
  // About 14 visits per 30-day period across disciplines.
  home_health: [
    { discipline: 'SN', share: 1, perWeek: 1.5, minutes: 50 },
    { discipline: 'PT', share: 0.6, perWeek: 1.5, minutes: 50 },
    { discipline: 'OT', share: 0.25, perWeek: 1, minutes: 50 },
    { discipline: 'ST', share: 0.08, perWeek: 1, minutes: 45 },
    { discipline: 'MSW', share: 0.12, perWeek: 0.5, minutes: 60 },
    { discipline: 'HHA', share: 0.3, perWeek: 1.5, minutes: 60 },
  ],
  hospice: [
    { discipline: 'SN', share: 1, perWeek: 1.5, minutes: 50 },
    { discipline: 'HHA', share: 0.7, perWeek: 2, minutes: 60 },
    { discipline: 'MSW', share: 0.8, perWeek: 0.5, minutes: 60 },
    { discipline: 'PT', share: 0.05, perWeek: 1, minutes: 50 },
  ],
  // Private duty aides work shifts.
  private_duty: [
    { discipline: 'HHA', share: 1, perWeek: 3, minutes: 240 },
    { discipline: 'SN', share: 0.25, perWeek: 0.5, minutes: 60 },
  ],
};

const SERVICE_CODES: Record<ServiceLine, Partial<Record<Discipline, string>>> = {
  home_health: { SN: 'G0299', PT: 'G0151', OT: 'G0152', ST: 'G0153', MSW: 'G0155', HHA: 'G0156' },
  hospice: { SN: 'G0299', PT: 'G0151', MSW: 'G0155', HHA: 'G0156' },
  private_duty: { SN: 'T1030', HHA: 'T1019' },
};

type StaffByOffice = ReadonlyMap<string, Record<Discipline, UserRef[]>>;

export interface VisitContext extends ChartContext {
  staff: StaffByOffice;
  window: readonly WindowDay[];
}

interface WindowDay {
  iso: string;
  weekday: number;
}

/** Every day from VISIT_WINDOW_DAYS before now to as many after, computed once per seed. */
export function visitWindow(now: Date): WindowDay[] {
  const first = dayStart(isoDay(addDays(now, -VISIT_WINDOW_DAYS)));
  return Array.from({ length: 2 * VISIT_WINDOW_DAYS + 1 }, (_, i) => {
    const day = addDays(first, i);
    return { iso: isoDay(day), weekday: day.getUTCDay() };
  });
}

function windowIndex(window: readonly WindowDay[], day: string): number {
  return Math.round((dayStart(day).getTime() - dayStart(window[0].iso).getTime()) / DAY_MS);
}

/** Clinicians grouped by office, so a patient's visits go to the staff of the office serving them. */
export function staffByOffice(clinicians: Record<Discipline, UserRef[]>): StaffByOffice {
  const staff = new Map<string, Record<Discipline, UserRef[]>>();
  for (const [discipline, users] of Object.entries(clinicians) as [Discipline, UserRef[]][]) {
    for (const user of users) {
      const office = staff.get(user.officeId) ?? { SN: [], PT: [], OT: [], ST: [], MSW: [], HHA: [] };
      office[discipline].push(user);
      staff.set(user.officeId, office);
    }
  }
  return staff;
}

interface Slot {
  day: string;
  plan: Plan;
  type: VisitType;
  episodeId: string;
  /** Started half an hour before now, so every demo has a visit in progress whatever `now` is. */
  underway?: boolean;
}

export function buildVisits(ctx: VisitContext, chart: Chart): Draft<'visits'>[] {
  const { rng } = ctx;
  // Showcase charts receive every discipline of their service line.
  const plans = chart.showcase ? PLANS[chart.line] : PLANS[chart.line].filter((plan) => rng.chance(plan.share));
  const caregivers = new Map(plans.map((plan) => [plan.discipline, assignedClinician(ctx, chart, plan.discipline)]));
  const slots = [...visitSlots(ctx, chart, plans), ...underwaySlot(ctx, chart, plans)];
  return slots.map((slot) => visitRow(ctx, chart, slot, caregivers.get(slot.plan.discipline) ?? null));
}

function assignedClinician(ctx: VisitContext, chart: Chart, discipline: Discipline): string | null {
  const local = ctx.staff.get(chart.place.officeId)?.[discipline] ?? [];
  const pool = local.length > 0 ? local : ctx.reference.clinicians[discipline];
  return pool.length > 0 ? ctx.rng.pick(pool).id : null;
}

/** Visit days inside each episode and the window: drawn by frequency, plus the visits the care path requires. */
function visitSlots(ctx: VisitContext, chart: Chart, plans: readonly Plan[]): Slot[] {
  const { rng, window } = ctx;
  const required = requiredVisits(chart, plans);
  const daysPerWeek = chart.line === 'home_health' ? 6 : 7;
  // A patient on hold keeps the first week of cancelled visits on the schedule; later ones were never booked.
  const lastBooked = chart.timeline.heldSince ? windowIndex(window, chart.timeline.heldSince) + 7 : window.length - 1;
  const evaluated = new Set<Discipline>();
  const slots: Slot[] = [];
  for (const episode of chart.episodes) {
    const firstEpisode = episode.start_date === chart.timeline.admittedOn && episode.start_date >= window[0].iso;
    const to = Math.min(lastBooked, episode.end_date ? windowIndex(window, episode.end_date) : lastBooked);
    for (let i = Math.max(0, windowIndex(window, episode.start_date)); i <= to; i++) {
      const day = window[i];
      const requiredToday = required.get(day.iso);
      // Home health books no routine visits on Sundays; the required ones happen whatever the day.
      if (!requiredToday && daysPerWeek === 6 && day.weekday === 0) continue;
      for (const plan of plans) {
        const forced = requiredToday?.get(plan.discipline);
        if (!forced && !rng.chance(plan.perWeek / daysPerWeek)) continue;
        const firstOfCare = firstEpisode && !evaluated.has(plan.discipline);
        evaluated.add(plan.discipline);
        slots.push({
          day: day.iso,
          plan,
          episodeId: episode.id,
          type: forced ?? routineType(rng, plan, plans, firstOfCare),
        });
      }
    }
  }
  return slots;
}

function underwaySlot(ctx: VisitContext, chart: Chart, plans: readonly Plan[]): Slot[] {
  const current = chart.episodes.find((episode) => episode.status === 'active');
  if (!chart.showcase || chart.status !== 'active' || !current || plans.length === 0) return [];
  return [{ day: isoDay(ctx.now), plan: plans[0], type: 'routine', episodeId: current.id, underway: true }];
}

/** Start of care, recertifications, resumption after a hospital stay and discharge fall on fixed days. */
function requiredVisits(chart: Chart, plans: readonly Plan[]): Map<string, Map<Discipline, VisitType>> {
  const nurse = plans.find((p) => p.discipline === 'SN')?.discipline ?? plans[0]?.discipline;
  const required = new Map<string, Map<Discipline, VisitType>>();
  const require = (day: string, type: VisitType | null) => {
    if (nurse && type) required.set(day, new Map([[nurse, type]]));
  };
  const { admittedOn, resumedOn, endedOn } = chart.timeline;
  for (const [n, episode] of chart.episodes.entries()) {
    require(episode.start_date, episode.start_date === admittedOn
      ? chart.line === 'private_duty'
        ? 'evaluation'
        : 'start_of_care'
      : recertification(chart.line, n));
  }
  if (resumedOn) require(resumedOn, 'resumption_of_care');
  if (endedOn && chart.status === 'discharged') require(endedOn, 'discharge');
  return required;
}

/** Home health recertifies every 60 days (every other 30-day period); hospice at every benefit period. */
function recertification(line: ServiceLine, episodeIndex: number): VisitType | null {
  if (line === 'hospice') return 'recertification';
  return line === 'home_health' && episodeIndex % 2 === 0 ? 'recertification' : null;
}

const NURSING_VISITS: Weights<VisitType> = { routine: 97, prn: 3 };
// A nurse supervises the aide every two weeks, which is about one nursing visit in eight.
const NURSING_VISITS_WITH_AIDE: Weights<VisitType> = { routine: 89, supervisory: 8, prn: 3 };

function routineType(rng: Random, plan: Plan, plans: readonly Plan[], firstOfCare: boolean): VisitType {
  if (firstOfCare && plan.discipline !== 'SN' && plan.discipline !== 'HHA') return 'evaluation';
  if (plan.discipline !== 'SN') return 'routine';
  return rng.weighted(plans.some((p) => p.discipline === 'HHA') ? NURSING_VISITS_WITH_AIDE : NURSING_VISITS);
}

function visitRow(ctx: VisitContext, chart: Chart, slot: Slot, caregiverId: string | null): Draft<'visits'> {
  const { rng, now } = ctx;
  const shift = slot.plan.minutes >= 240;
  const startMinute = shift ? rng.pick([7, 8, 9, 13]) * 60 : 8 * 60 + 15 * rng.int(0, 32);
  const scheduled_start = slot.underway
    ? addMinutes(now, -30)
    : zonedTime(slot.day, startMinute, ctx.area.timezoneOf.get(chart.place.officeId) ?? 'UTC');
  const planned = slot.plan.minutes + (slot.type === 'start_of_care' || slot.type === 'evaluation' ? 30 : 0);
  const scheduled_end = addMinutes(scheduled_start, planned);
  const held = chart.timeline.heldSince !== null && slot.day >= chart.timeline.heldSince;
  const outcome = visitOutcome(rng, { scheduled_start, scheduled_end, now, held });
  const created_at = minDate(addDays(scheduled_start, -rng.int(1, 14)), addMinutes(now, -rng.int(60, 72 * 60)));
  return {
    id: rng.id('vis'),
    patient_id: chart.patient.id,
    episode_id: slot.episodeId,
    discipline: slot.plan.discipline,
    visit_type: slot.type,
    scheduled_start,
    scheduled_end,
    ...outcome,
    clinician_id: outcome.status === 'scheduled' && rng.chance(0.03) ? null : caregiverId,
    office_id: chart.place.officeId,
    service_code: SERVICE_CODES[chart.line][slot.plan.discipline] ?? null,
    evv_status: evvStatus(rng, chart.line, outcome.status),
    documentation_status: documentationStatus(rng, outcome.status, scheduled_end, now),
    created_at,
    updated_at:
      outcome.actual_end ??
      outcome.actual_start ??
      (outcome.status === 'scheduled' ? created_at : minDate(scheduled_end, now)),
  };
}

interface Outcome {
  status: VisitStatus;
  actual_start: Date | null;
  actual_end: Date | null;
  duration_minutes: number | null;
  missed_reason: string | null;
  cancellation_reason: string | null;
}

const PAST_VISIT_FATES: Weights<VisitStatus> = { completed: 90, missed: 6, cancelled: 4 };
const NOT_DONE = {
  actual_start: null,
  actual_end: null,
  duration_minutes: null,
  missed_reason: null,
  cancellation_reason: null,
};
const MISSED_REASONS = ['Patient not home', 'Patient refused visit', 'Patient hospitalized', 'Clinician illness'];
const CANCELLATION_REASONS = [
  'Patient requested reschedule',
  'Clinician unavailable; rescheduled',
  'Physician changed orders',
];

/**
 * Past visits mostly happened; future ones are scheduled. A visit under way (or one whose clinician has not
 * clocked out within the last 12 hours) is in progress. Visits after a patient went on hold are cancelled.
 */
function visitOutcome(
  rng: Random,
  v: { scheduled_start: Date; scheduled_end: Date; now: Date; held: boolean },
): Outcome {
  const { scheduled_start, scheduled_end, now } = v;
  if (v.held)
    return { ...NOT_DONE, status: 'cancelled', cancellation_reason: 'Patient on hold: inpatient hospital stay' };
  if (scheduled_start > now) {
    return rng.chance(0.04)
      ? { ...NOT_DONE, status: 'cancelled', cancellation_reason: rng.pick(CANCELLATION_REASONS) }
      : { ...NOT_DONE, status: 'scheduled' };
  }
  const actual_start = minDate(addMinutes(scheduled_start, rng.int(-10, 25)), now);
  const sinceStart = now.getTime() - scheduled_start.getTime();
  if (
    now.getTime() < scheduled_end.getTime() + 45 * MINUTE_MS ||
    (sinceStart < 12 * 60 * MINUTE_MS && rng.chance(0.25))
  ) {
    return { ...NOT_DONE, status: 'in_progress', actual_start };
  }
  const fate = rng.weighted(PAST_VISIT_FATES);
  if (fate === 'missed') return { ...NOT_DONE, status: 'missed', missed_reason: rng.pick(MISSED_REASONS) };
  if (fate === 'cancelled')
    return { ...NOT_DONE, status: 'cancelled', cancellation_reason: rng.pick(CANCELLATION_REASONS) };
  const duration_minutes = Math.max(
    15,
    Math.round((scheduled_end.getTime() - scheduled_start.getTime()) / MINUTE_MS) + rng.int(-10, 20),
  );
  return {
    ...NOT_DONE,
    status: 'completed',
    actual_start,
    actual_end: addMinutes(actual_start, duration_minutes),
    duration_minutes,
  };
}

const EVV_OF_COMPLETED: Weights<EvvStatus> = { verified: 85, exception: 10, unverified: 5 };

/** Hospice is exempt from EVV; visits that did not happen have nothing to verify. */
function evvStatus(rng: Random, line: ServiceLine, status: VisitStatus): EvvStatus {
  if (line === 'hospice' || status === 'missed' || status === 'cancelled') return 'not_required';
  if (status !== 'completed') return 'unverified';
  return rng.weighted(EVV_OF_COMPLETED);
}

const NOTES_UNDER_WAY: Weights<DocumentationStatus> = { in_progress: 60, not_started: 40 };
const RECENT_NOTES: Weights<DocumentationStatus> = { submitted: 50, in_progress: 35, not_started: 15 };
const OLDER_NOTES: Weights<DocumentationStatus> = { approved: 75, submitted: 20, in_progress: 5 };

/** Notes of recent visits are still being written or reviewed; older ones are mostly approved. */
function documentationStatus(rng: Random, status: VisitStatus, scheduled_end: Date, now: Date): DocumentationStatus {
  if (status === 'in_progress') return rng.weighted(NOTES_UNDER_WAY);
  if (status !== 'completed') return 'not_started';
  const recent = now.getTime() - scheduled_end.getTime() < 3 * 1440 * MINUTE_MS;
  return rng.weighted(recent ? RECENT_NOTES : OLDER_NOTES);
}
