import { createHmac, randomBytes } from 'node:crypto';
import { payloadHash, signatureV1 } from './verify-delivery.js';

const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

/** A new signing secret: `whsec_` and 32 random bytes in base64, the Standard Webhooks form. */
export function newSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** Why a secret given by an administrator cannot sign both ways, or undefined when it can. */
export function signingSecretProblem(secret: string): string | undefined {
  const key = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : undefined;
  const bytes = key !== undefined && /^[A-Za-z0-9+/]+={0,2}$/.test(key) ? Buffer.from(key, 'base64') : undefined;
  if (!bytes || bytes.length < 24 || bytes.length > 64)
    return `a signing secret is ${SECRET_PREFIX} followed by 24 to 64 bytes in base64 (omit --secret to get one)`;
  return undefined;
}

export interface SigningSecrets {
  current: string;
  /** The retiring secret, during its overlap window. */
  previous?: string;
}

/** Standard Webhooks: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`, keyed with the bytes after `whsec_`. */
function standardSignature(secret: string, id: string, timestamp: string, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The headers of one attempt (README "Delivery" and Standard Webhooks), signed at `timestamp` (Unix seconds). */
export function deliveryHeaders(
  body: string,
  deliveryId: string,
  timestamp: number,
  secrets: SigningSecrets,
): Record<string, string> {
  const time = String(timestamp);
  const hash = payloadHash(body);
  const all = [secrets.current, ...(secrets.previous ? [secrets.previous] : [])];
  return {
    'content-type': 'application/json',
    'x-svc-payload-sha256': hash,
    'x-svc-signature-timestamp': time,
    'x-svc-delivery-id': deliveryId,
    'x-svc-signature': signatureV1(secrets.current, time, deliveryId, hash, body),
    ...(secrets.previous
      ? { 'x-svc-signature-previous': signatureV1(secrets.previous, time, deliveryId, hash, body) }
      : {}),
    'webhook-id': deliveryId,
    'webhook-timestamp': time,
    'webhook-signature': all.map((secret) => standardSignature(secret, deliveryId, time, body)).join(' '),
  };
}
