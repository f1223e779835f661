import { randomBytes } from 'node:crypto';

/** A random identifier: prefix plus `bytes` random bytes in base64url. */
export function randomId(prefix: string, bytes = 16): string {
  return `${prefix}${randomBytes(bytes).toString('base64url')}`;
}

/** Handle prefixes by kind of resource; the physician order prefix `OR-` is fixed by the contract. */
export const PSEUDONYM_PREFIX = {
  patient: 'PT-',
  physician: 'PH-',
  physician_order: 'OR-',
  claim: 'CL-',
  payer_claim: 'PC-',
  member: 'MB-',
} as const;

export type PseudonymKind = keyof typeof PSEUDONYM_PREFIX;
