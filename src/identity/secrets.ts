import { createHash, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { ConcurrencyGate } from '../shared/concurrency-gate.js';
import { randomId } from '../shared/ids.js';
import { PlatformError } from '../shared/platform-error.js';

export function newClientId(): string {
  return randomId('cli_');
}

/** 256 random bits: out of reach of guessing, so a secret never needs a lockout to stay safe. */
export function newClientSecret(): string {
  return randomId('sk_', 32);
}

/**
 * The row id of a stored secret, derived from the secret so that a presented secret names the one hash
 * to verify (exactly one scrypt per attempt, whatever the client's rotation state). A SHA-256 prefix
 * of a 256-bit random value reveals nothing usable about it.
 */
export function secretLookupId(secret: string): string {
  return `sec_${createHash('sha256').update(secret).digest('base64url').slice(0, 22)}`;
}

// N = 2^14, r = 8: 16 MiB and tens of milliseconds per hash; the secrets are random, so this is defence in depth.
const PARAMS = { N: 16_384, r: 8, p: 1 } as const;
/** People choose passwords, so their hashes get OWASP's scrypt minimum (N = 2^17, r = 8: 128 MiB per hash). */
export const PASSWORD_PARAMS = { N: 131_072, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;
const FORMAT = /^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/;

/** Hashes a process runs at once, and callers that may wait for one; see hashing. */
export const HASHING_LIMITS = { running: 2, waiting: 8 } as const;

/**
 * Every scrypt of the process (passwords, client secrets) goes through this gate: each holds a thread of libuv's pool,
 * which file and DNS work share, and up to 128 MiB (a password's), so a flood of sign-ins or token requests would
 * otherwise take all the threads and memory there is. Past the line, a caller is refused at once rather than queued.
 */
const hashing = new ConcurrencyGate(
  HASHING_LIMITS,
  () =>
    new PlatformError(
      'PLATFORM_SERVICE_UNAVAILABLE',
      'Too many sign-ins and token requests are being checked at once; retry shortly.',
      { retry_after_seconds: 1 },
      { 'retry-after': '1' },
    ),
);

function derive(secret: string, salt: Buffer, params: ScryptOptions, length: number): Promise<Buffer> {
  // scrypt needs 128 * N * r bytes; room for that and Node's margin.
  const maxmem = 256 * (params.N ?? PARAMS.N) * (params.r ?? PARAMS.r);
  return hashing.run(
    () =>
      new Promise((resolve, reject) =>
        scrypt(secret, salt, length, { ...params, maxmem }, (err, key) => (err ? reject(err) : resolve(key))),
      ),
  );
}

/** PHC-style string: `$scrypt$ln=14,r=8,p=1$<salt>$<hash>`, so parameters can change without breaking old hashes. */
export async function hashSecret(
  secret: string,
  params: { N: number; r: number; p: number } = PARAMS,
): Promise<string> {
  const salt = randomBytes(16);
  const hash = await derive(secret, salt, params, KEY_LENGTH);
  return `$scrypt$ln=${Math.log2(params.N)},r=${params.r},p=${params.p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const match = FORMAT.exec(stored);
  if (!match) return false;
  const [, ln, r, p, salt, hash] = match;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await derive(
    secret,
    Buffer.from(salt, 'base64url'),
    { N: 2 ** Number(ln), r: Number(r), p: Number(p) },
    expected.length,
  );
  return timingSafeEqual(actual, expected);
}

const dummies = new Map<object, Promise<string>>();

/**
 * A hash of a secret nobody knows, verified when the client (or the user, with PASSWORD_PARAMS) is unknown so that the
 * time taken does not tell: one per set of parameters, made once.
 */
export function dummySecretHash(params: { N: number; r: number; p: number } = PARAMS): Promise<string> {
  let dummy = dummies.get(params);
  if (!dummy) {
    dummies.set(params, (dummy = hashSecret(newClientSecret(), params)));
    // Refused while the hashing gate was full: made by a later caller instead.
    dummy.catch(() => dummies.delete(params));
  }
  return dummy;
}
