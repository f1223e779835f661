import { createHash } from 'node:crypto';
import { gcmOpen, gcmSeal } from './aes-gcm.js';

const FORMAT = 'v1';
const KEY_BYTES = 32;

/** A key-encryption key (KEK): it seals the secrets the database stores, and never lives in the database itself. */
interface KeyEncryptionKey {
  /** A short fingerprint of the key, written in front of everything sealed under it. */
  id: string;
  key: Buffer;
  /** Where it was configured, for messages (never the key itself). */
  source: string;
}

export function keyEncryptionKey(key: Buffer, source: string): KeyEncryptionKey {
  const id = createHash('sha256')
    .update('extension-api key-encryption key id\n')
    .update(key)
    .digest('hex')
    .slice(0, 12);
  return { id, key, source };
}

/**
 * A KEK as configured: 32 bytes in base64 (standard or URL-safe alphabet) or hex. The message never repeats the
 * value, which may be a mistyped real key.
 */
export function decodeKeyText(text: string, name: string): Buffer {
  const trimmed = text.trim();
  const bytes = /^[0-9a-f]{64}$/i.test(trimmed)
    ? Buffer.from(trimmed, 'hex')
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)
      ? Buffer.from(trimmed, 'base64')
      : undefined;
  if (bytes?.length !== KEY_BYTES) {
    throw new Error(
      `${name} must be ${KEY_BYTES} random bytes in base64 or hex (e.g. the output of "openssl rand -base64 32"), got ${trimmed.length} characters`,
    );
  }
  return bytes;
}

/** The sealed form's key id, or undefined when `sealed` is not in the sealed format. */
export function sealedKeyId(sealed: string): string | undefined {
  const parts = sealed.split('.');
  return parts.length === 4 && parts[0] === FORMAT ? parts[1] : undefined;
}

/** The header is authenticated with the row's name, so a sealed value copied to another row does not open there. */
const additionalData = (keyId: string, row: string) => Buffer.from(`${FORMAT}.${keyId}.${row}`, 'utf8');

/**
 * Envelope encryption of stored secrets: AES-256-GCM under the current KEK, as `v1.<kek id>.<iv>.<ciphertext+tag>`
 * (base64url), bound to the row it belongs to. Opens what was sealed under the current key or a previous one, so
 * the KEK can be rotated: every process accepts both, then everything is sealed again under the new one.
 */
export class KeyEncryption {
  private readonly keys: Map<string, KeyEncryptionKey>;

  constructor(
    readonly current: KeyEncryptionKey,
    readonly previous: readonly KeyEncryptionKey[] = [],
  ) {
    this.keys = new Map([...previous, current].map((k) => [k.id, k]));
  }

  /** `row` names where the value is stored (e.g. `signing_keys/<kid>`): it must be the same to open it. */
  seal(plaintext: Buffer | string, row: string): string {
    const { iv, body } = gcmSeal(this.current.key, plaintext, additionalData(this.current.id, row));
    return [FORMAT, this.current.id, iv.toString('base64url'), body.toString('base64url')].join('.');
  }

  /** The plaintext; throws a message naming the row and the key ids when it cannot be opened. */
  open(sealed: string | null, row: string): Buffer {
    if (sealed === null)
      throw new Error(`${row} is stored in plaintext (written by an older version): restart the service to seal it`);
    const keyId = sealedKeyId(sealed);
    if (keyId === undefined)
      throw new Error(`${row} is not a sealed secret (expected ${FORMAT}.<key id>.<iv>.<ciphertext>)`);
    const kek = this.keys.get(keyId);
    if (!kek) {
      throw new Error(
        `${row} is sealed under key-encryption key ${keyId}, which is not configured (configured: ${this.describe()}). ` +
          'Set SECRETS_KEY to the key it was sealed with, or add that key to SECRETS_KEY_PREVIOUS while rotating.',
      );
    }
    const [, , iv, body] = sealed.split('.');
    const plaintext = gcmOpen(
      kek.key,
      { iv: Buffer.from(iv, 'base64url'), body: Buffer.from(body, 'base64url') },
      additionalData(keyId, row),
    );
    if (plaintext === undefined)
      throw new Error(
        `${row} does not decrypt under key-encryption key ${keyId}: it was altered, or copied from another row`,
      );
    return plaintext;
  }

  /** True when `sealed` is sealed under the current key (nothing to re-encrypt). */
  isCurrent(sealed: string): boolean {
    return sealedKeyId(sealed) === this.current.id;
  }

  /** The configured key ids and where they come from, e.g. `3f9a0c21b7de (SECRETS_KEY)`. */
  describe(): string {
    return [this.current, ...this.previous].map((k) => `${k.id} (${k.source})`).join(', ');
  }
}
