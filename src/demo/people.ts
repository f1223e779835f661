import type { Gender } from '../db/tables/tenant-row.js';
import { addDays, isoDay } from './calendar.js';
import type { Random, Weights } from './random.js';
import {
  FEMALE_FIRST_NAMES,
  LAST_NAMES,
  MALE_FIRST_NAMES,
  NAME_SUFFIXES,
  STREET_NAMES,
  STREET_SUFFIXES,
} from './vocabulary.js';

interface NameParts {
  first_name: string;
  middle_name: string | null;
  last_name: string;
  suffix: string | null;
}

export function firstName(rng: Random, gender: Gender): string {
  if (gender === 'unknown') return rng.pick(rng.chance(0.5) ? FEMALE_FIRST_NAMES : MALE_FIRST_NAMES);
  return rng.pick(gender === 'female' ? FEMALE_FIRST_NAMES : MALE_FIRST_NAMES);
}

export function personName(rng: Random, gender: Gender, lastName = rng.pick(LAST_NAMES)): NameParts {
  return {
    first_name: firstName(rng, gender),
    middle_name: rng.maybe(0.4, () => firstName(rng, gender)),
    last_name: lastName,
    suffix: gender === 'male' ? rng.maybe(0.05, () => rng.pick(NAME_SUFFIXES)) : null,
  };
}

export function displayName(name: Pick<NameParts, 'first_name' | 'last_name'> & Partial<NameParts>): string {
  return [name.first_name, name.middle_name, name.last_name, name.suffix].filter(Boolean).join(' ');
}

const GENDERS: Weights<Gender> = { female: 58, male: 41, unknown: 1 };

export function gender(rng: Random): Gender {
  return rng.weighted(GENDERS);
}

/** 555-0100 to 555-0199 are reserved for fiction in every North American area code. */
export function fictionalPhone(rng: Random, areaCode: string): string {
  return `${areaCode}-555-01${rng.digits(2)}`;
}

export function streetAddress(rng: Random): { line1: string; line2: string | null } {
  return {
    line1: `${rng.int(100, 9899)} ${rng.pick(STREET_NAMES)} ${rng.pick(STREET_SUFFIXES)}`,
    line2: rng.maybe(0.12, () => `Apt ${rng.int(1, 40)}${rng.pick(['', 'A', 'B', 'C'])}`),
  };
}

/** A birth date that makes the person between minAge and maxAge years old at `now`. */
export function birthDate(rng: Random, now: Date, minAge: number, maxAge: number): string {
  return isoDay(addDays(now, -Math.round((minAge + rng.next() * (maxAge - minAge)) * 365.25)));
}
