/**
 * HIPAA Safe Harbor reductions (45 CFR 164.514(b)(2)) used by no_phi sessions: dates to the year,
 * ages over 89 grouped as "90+", ZIP codes to three digits (000 where the three-digit area holds
 * 20,000 people or fewer), and account-like numbers removed.
 */

/** Three-digit ZIP areas of 20,000 or fewer people (2000 Census, per HHS guidance). */
const SPARSE_ZIP3 = new Set([
  '036',
  '059',
  '063',
  '102',
  '203',
  '556',
  '692',
  '790',
  '821',
  '823',
  '830',
  '831',
  '878',
  '879',
  '884',
  '890',
  '893',
]);

/** A patient date reduced to its year, kept in its format: "1987-06-14" -> "1987-01-01". */
export function dateToYear(date: string): string;
export function dateToYear(date: string | null): string | null;
export function dateToYear(date: string | null): string | null {
  return date === null ? null : `${date.slice(0, 4)}-01-01`;
}

/** An instant about a patient reduced to its (UTC) year: 2026-03-04T10:00Z -> "2026-01-01T00:00:00.000Z". */
export function instantToYear(instant: Date): string;
export function instantToYear(instant: Date | null): string | null;
export function instantToYear(instant: Date | null): string | null {
  return instant === null ? null : `${instant.getUTCFullYear()}-01-01T00:00:00.000Z`;
}

function ageInYears(dob: string, asOf: Date): number {
  const [year, month, day] = dob.split('-').map(Number);
  const beforeBirthday =
    asOf.getUTCMonth() + 1 < month || (asOf.getUTCMonth() + 1 === month && asOf.getUTCDate() < day);
  return asOf.getUTCFullYear() - year - (beforeBirthday ? 1 : 0);
}

/** Age as the contract shows it: whole years, or "90+" past 89. */
export function ageLabel(dob: string | null, asOf: Date): string | null {
  if (!dob) return null;
  const age = ageInYears(dob, asOf);
  return age > 89 ? '90+' : String(age);
}

/** Years since the birth year, as of the year of `asOf`: the birthday itself plays no part. */
function yearsSinceBirthYear(dob: string, asOf: Date): number {
  return asOf.getUTCFullYear() - Number(dob.slice(0, 4));
}

/**
 * Age as a no_phi session sees it: the current year minus the birth year, "90+" at 90 or more. It changes on
 * January 1 for everyone, so a client reading it daily learns nothing of the birthday; it is the exact age or one more,
 * so "90+" covers everyone over 89 (Safe Harbor) and a few who are 89.
 */
export function ageFromBirthYear(dob: string | null, asOf: Date): string | null {
  if (!dob) return null;
  const years = yearsSinceBirthYear(dob, asOf);
  return years >= 90 ? '90+' : String(years);
}

/** A date of birth reduced to its year ("1951-12-31" -> "1951-01-01"), withheld when ageFromBirthYear reads "90+". */
export function birthDateToYear(dob: string | null, asOf: Date): string | null {
  return dob && yearsSinceBirthYear(dob, asOf) < 90 ? dateToYear(dob) : null;
}

export function zip3(zip: string | null | undefined): string | null {
  const digits = zip?.replace(/\D/g, '').slice(0, 3);
  if (!digits || digits.length < 3) return null;
  return SPARSE_ZIP3.has(digits) ? '000' : digits;
}

/** Check and EFT trace numbers in phi sessions: only the last four characters. */
export function lastFour(value: string | null | undefined): string | null {
  if (!value) return null;
  return `****${value.slice(-4)}`;
}
