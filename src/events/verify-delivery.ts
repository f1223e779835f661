import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The receiver's side of the signature, with nothing but node:crypto so that a receiver can take this file alone.
 * Verifies on the raw body before parsing; the signing side is signing.ts, which builds the same strings.
 */

export interface WebhookEnvelope<Data = Record<string, unknown>> {
  id: string;
  type: string;
  envelope_version: string;
  contract_version: string;
  agency_id: string;
  created_at: string;
  data: Data;
}

export type VerificationFailure =
  | 'missing_header'
  | 'payload_hash_mismatch'
  | 'timestamp_out_of_tolerance'
  | 'signature_mismatch'
  | 'malformed_body';

export class WebhookVerificationError extends Error {
  constructor(
    readonly reason: VerificationFailure,
    message: string,
  ) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

export type DeliveryHeaders = Record<string, string | string[] | undefined> | { get(name: string): string | null };

export interface VerifyOptions {
  /** How far the signing time may be from now, either way (x-svc-webhook-delivery, 300 by default). */
  toleranceSeconds?: number;
  /** Now, in milliseconds (for tests). */
  now?: number;
}

/** `sha256=` + hex SHA-256 of the raw body: x-svc-payload-sha256. */
export function payloadHash(rawBody: Uint8Array | string): string {
  return `sha256=${createHash('sha256').update(rawBody).digest('hex')}`;
}

/** `v1=` + hex HMAC-SHA256 of `v1.<timestamp>.<deliveryId>.<payloadHash>.<rawBody>`, keyed with the secret's text. */
export function signatureV1(
  secret: string,
  timestamp: string,
  deliveryId: string,
  hash: string,
  rawBody: Uint8Array | string,
): string {
  const hmac = createHmac('sha256', Buffer.from(secret, 'utf8'));
  hmac.update(`v1.${timestamp}.${deliveryId}.${hash}.`).update(rawBody);
  return `v1=${hmac.digest('hex')}`;
}

function header(headers: DeliveryHeaders, name: string): string | undefined {
  if (typeof headers.get === 'function')
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  const plain = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(plain).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : plain[key];
  return Array.isArray(value) ? value[0] : value;
}

function required(headers: DeliveryHeaders, name: string): string {
  const value = header(headers, name);
  if (!value) throw new WebhookVerificationError('missing_header', `the ${name} header is missing`);
  return value;
}

/** Compares in constant time for strings of one length (a length difference says nothing about a secret). */
function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * Checks a delivery and returns its parsed envelope: the payload hash against the raw body, the timestamp within
 * the tolerance, and x-svc-signature (or x-svc-signature-previous, during a rotation) under one of `secrets`, all
 * compared in constant time. Throws WebhookVerificationError, whose `reason` says which check failed.
 */
export function verifyDelivery<Data = Record<string, unknown>>(
  rawBody: Uint8Array | string,
  headers: DeliveryHeaders,
  secrets: string | readonly string[],
  { toleranceSeconds = 300, now = Date.now() }: VerifyOptions = {},
): WebhookEnvelope<Data> {
  const hash = required(headers, 'x-svc-payload-sha256');
  const timestamp = required(headers, 'x-svc-signature-timestamp');
  const deliveryId = required(headers, 'x-svc-delivery-id');
  const signatures = [required(headers, 'x-svc-signature'), header(headers, 'x-svc-signature-previous')].filter(
    (s): s is string => Boolean(s),
  );
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  if (!sameText(payloadHash(body), hash))
    throw new WebhookVerificationError('payload_hash_mismatch', 'x-svc-payload-sha256 does not match the body');
  const seconds = /^\d{1,12}$/.test(timestamp) ? Number(timestamp) : NaN;
  if (!(Math.abs(now / 1000 - seconds) <= toleranceSeconds)) {
    throw new WebhookVerificationError(
      'timestamp_out_of_tolerance',
      `x-svc-signature-timestamp is more than ${toleranceSeconds} seconds from now`,
    );
  }
  const candidates = (typeof secrets === 'string' ? [secrets] : secrets).map((secret) =>
    signatureV1(secret, timestamp, deliveryId, hash, body),
  );
  // Every pair is compared, so the time taken does not say which secret or header matched.
  const matches = candidates.map((expected) => signatures.map((sent) => sameText(expected, sent)).some(Boolean));
  if (!matches.some(Boolean))
    throw new WebhookVerificationError('signature_mismatch', 'no signature matches a given secret');
  try {
    return JSON.parse(Buffer.from(body).toString('utf8')) as WebhookEnvelope<Data>;
  } catch {
    throw new WebhookVerificationError('malformed_body', 'the body is not JSON');
  }
}
