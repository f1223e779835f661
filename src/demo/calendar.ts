import type { Random } from './random.js';

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

export function addMinutes(at: Date, minutes: number): Date {
  return new Date(at.getTime() + minutes * MINUTE_MS);
}

export function addDays(at: Date, days: number): Date {
  return new Date(at.getTime() + days * DAY_MS);
}

/** Calendar day of an instant in UTC, 'YYYY-MM-DD'. */
export function isoDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** UTC midnight of a 'YYYY-MM-DD' day. */
export function dayStart(day: string): Date {
  return new Date(`${day}T00:00:00Z`);
}

export function minDate(a: Date, b: Date): Date {
  return a < b ? a : b;
}

const offsetFormats = new Map<string, Intl.DateTimeFormat>();
const offsets = new Map<string, number>();

/** Minutes east of UTC of a zone on a day (noon UTC), cached: visits ask for the same few zones and days. */
function utcOffsetMinutes(timeZone: string, day: string): number {
  const key = `${timeZone}|${day}`;
  let offset = offsets.get(key);
  if (offset === undefined) {
    let format = offsetFormats.get(timeZone);
    if (!format) {
      format = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' });
      offsetFormats.set(timeZone, format);
    }
    const name =
      format.formatToParts(new Date(`${day}T12:00:00Z`)).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
    const [, sign = '+', hours = '0', minutes = '0'] = /GMT([+-])(\d\d):(\d\d)/.exec(name) ?? [];
    offset = (sign === '-' ? -1 : 1) * (Number(hours) * 60 + Number(minutes));
    offsets.set(key, offset);
  }
  return offset;
}

/** The instant of a wall-clock time on a day in a zone, e.g. 09:30 on 2026-11-16 in America/Chicago. */
export function zonedTime(day: string, minuteOfDay: number, timeZone: string): Date {
  return addMinutes(dayStart(day), minuteOfDay - utcOffsetMinutes(timeZone, day));
}

/** created_at up to maxAgeDays before now, updated_at between it and now. */
export function pastStamps(rng: Random, now: Date, maxAgeDays: number): { created_at: Date; updated_at: Date } {
  const created_at = addMinutes(now, -rng.int(60, maxAgeDays * 1440));
  return { created_at, updated_at: laterThan(rng, created_at, now) };
}

/** A moment between `from` and `now` (or `from` itself when it is not before now). */
export function laterThan(rng: Random, from: Date, now: Date): Date {
  const span = now.getTime() - from.getTime();
  return span <= 0 ? from : new Date(from.getTime() + Math.floor(rng.next() * span));
}
