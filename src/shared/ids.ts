import { randomBytes } from 'node:crypto';

/** A random identifier: prefix plus `bytes` random bytes in base64url. */
export function randomId(prefix: string, bytes = 16): string {
  return `${prefix}${randomBytes(bytes).toString('base64url')}`;
}
