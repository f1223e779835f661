/** Values of 835 elements: amounts in cents, dates, and the code sets the importer keeps. */

/** X12 R amounts as whole cents ("150000.00" -> 15000000, "-1.27" -> -127, "220" -> 22000); null when not an amount. */
export function parseCents(text: string): number | null {
  const match = /^(-?)(\d*)(?:\.(\d*))?$/.exec(text);
  if (!match || (match[2] === '' && (match[3] ?? '') === '')) return null;
  const [, sign, whole, fraction = ''] = match;
  if (/[1-9]/.test(fraction.slice(2))) return null;
  const cents = Number(whole || '0') * 100 + Number(fraction.slice(0, 2).padEnd(2, '0'));
  if (!Number.isSafeInteger(cents)) return null;
  return sign === '-' && cents !== 0 ? -cents : cents;
}

/** Cents as the contract's money: a decimal string with two places (-127 -> "-1.27"). */
export function formatCents(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** A CCYYMMDD date as YYYY-MM-DD, or null when it is not a calendar date. */
export function parseDate(text: string): string | null {
  const match = /^(\d{4})(\d{2})(\d{2})$/.exec(text);
  if (!match) return null;
  const [, y, m, d] = match.map(Number);
  const date = new Date(Date.UTC(y, m - 1, d));
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== m - 1 || date.getUTCDate() !== d) return null;
  return `${match[1]}-${match[2]}-${match[3]}`;
}

/** CLP02, claim status codes of 005010X221A1, and what each means. */
export const CLAIM_STATUSES = {
  '1': 'processed_as_primary',
  '2': 'processed_as_secondary',
  '3': 'processed_as_tertiary',
  '4': 'denied',
  '19': 'processed_as_primary_forwarded',
  '20': 'processed_as_secondary_forwarded',
  '21': 'processed_as_tertiary_forwarded',
  '22': 'reversal_of_previous_payment',
  '23': 'not_our_claim_forwarded',
  '25': 'predetermination_pricing_only',
} as const;
export type ClaimStatusCode = keyof typeof CLAIM_STATUSES;
export type ClaimStatus = (typeof CLAIM_STATUSES)[ClaimStatusCode];
export const REVERSAL: ClaimStatusCode = '22';

export function isClaimStatusCode(code: string): code is ClaimStatusCode {
  return Object.hasOwn(CLAIM_STATUSES, code);
}

/** CAS01, claim adjustment group codes: contractual, correction and reversal, other, payer initiated, patient. */
export const ADJUSTMENT_GROUPS = ['CO', 'CR', 'OA', 'PI', 'PR'] as const;
export type AdjustmentGroup = (typeof ADJUSTMENT_GROUPS)[number];

export function isAdjustmentGroup(code: string): code is AdjustmentGroup {
  return (ADJUSTMENT_GROUPS as readonly string[]).includes(code);
}

/** BPR04. */
const PAYMENT_METHODS = ['ACH', 'BOP', 'CHK', 'FWT', 'NON'] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

export function isPaymentMethod(code: string): code is PaymentMethod {
  return (PAYMENT_METHODS as readonly string[]).includes(code);
}

/** CARC 253: sequestration, a reduction of the payment, not of the allowance. */
export const SEQUESTRATION_CARC = '253';
