import { createHash, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { DB } from '../db/schema.js';
import { lockKey, xactLock } from '../db/advisory-locks.js';
import type { PublicJwk, SigningKeysTable } from '../db/tables/identity.js';
import type { KeyEncryption } from './key-encryption.js';
import { signingKeyRow } from './secrets-at-rest.js';

/**
 * Instances refresh their key ring every KEY_RING_REFRESH_MS, so one may still sign with a key for that long
 * after another retired it: a retired key keeps verifying for the token lifetime plus this margin.
 */
const RETIREMENT_MARGIN_SECONDS = 60;
const KEY_RING_REFRESH_MS = 5_000;
/** An unknown kid forces a reload (a key created by another instance), but at most this often. */
const UNKNOWN_KID_REFRESH_MS = 1_000;

interface NewSigningKey {
  kid: string;
  privateKeyPem: string;
  publicJwk: PublicJwk;
}

/** A P-256 key pair; the kid is the RFC 7638 thumbprint of the public key. */
export function generateSigningKey(): NewSigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const { x, y } = publicKey.export({ format: 'jwk' }) as { x: string; y: string };
  const kid = createHash('sha256')
    .update(JSON.stringify({ crv: 'P-256', kty: 'EC', x, y }))
    .digest('base64url');
  return {
    kid,
    privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    publicJwk: { kty: 'EC', crv: 'P-256', x, y, kid, alg: 'ES256', use: 'sig' },
  };
}

interface Rotation {
  kid: string;
  retired: { kid: string; verifyUntil: Date }[];
}

async function rotateLocked(
  db: Kysely<DB>,
  keys: KeyEncryption,
  tokenTtlSeconds: number,
  onlyIfNone: boolean,
): Promise<Rotation | undefined> {
  return db.transaction().execute(async (trx) => {
    // Serializes rotations across instances (and the admin tool), so two never both retire and replace one key.
    await sql`select ${xactLock(lockKey('signing-keys'))}`.execute(trx);
    if (onlyIfNone) {
      const active = await trx
        .selectFrom('signing_keys')
        .select('kid')
        .where('retired_at', 'is', null)
        .executeTakeFirst();
      if (active) return undefined;
    }
    const retired = await trx
      .updateTable('signing_keys')
      .set({
        retired_at: sql`now()`,
        verify_until: sql`now() + make_interval(secs => ${tokenTtlSeconds + RETIREMENT_MARGIN_SECONDS})`,
      })
      .where('retired_at', 'is', null)
      .returning(['kid', 'verify_until'])
      .execute();
    const key = generateSigningKey();
    await trx
      .insertInto('signing_keys')
      .values({
        kid: key.kid,
        algorithm: 'ES256',
        private_key_sealed: keys.seal(key.privateKeyPem, signingKeyRow(key.kid)),
        public_jwk: JSON.stringify(key.publicJwk),
      })
      .execute();
    return { kid: key.kid, retired: retired.map((r) => ({ kid: r.kid, verifyUntil: r.verify_until! })) };
  });
}

/** Creates a new active key and retires the previous one, which keeps verifying its tokens until they expire. */
export async function rotateSigningKey(
  db: Kysely<DB>,
  keys: KeyEncryption,
  tokenTtlSeconds: number,
): Promise<Rotation> {
  return (await rotateLocked(db, keys, tokenTtlSeconds, false))!;
}

/** Creates the first key when there is no active one; returns its kid, or undefined when a key existed. */
export async function ensureSigningKey(
  db: Kysely<DB>,
  keys: KeyEncryption,
  tokenTtlSeconds: number,
): Promise<string | undefined> {
  return (await rotateLocked(db, keys, tokenTtlSeconds, true))?.kid;
}

interface LoadedKey {
  kid: string;
  /** Only while active (retired keys never sign): opened once per key, not on every reload. */
  privateKeyPem: string | undefined;
  publicKeyPem: string;
  publicJwk: PublicJwk;
  createdAt: Date;
  verifyUntil: Date | null;
}

interface ActiveSigningKey {
  kid: string;
  privateKeyPem: string;
}

/** `known` is the same key as loaded before: its kid is its public key's thumbprint, so what was derived from it still holds. */
function toLoadedKey(row: Selectable<SigningKeysTable>, keys: KeyEncryption, known: LoadedKey | undefined): LoadedKey {
  return {
    kid: row.kid,
    privateKeyPem:
      row.retired_at === null
        ? (known?.privateKeyPem ?? keys.open(row.private_key_sealed, signingKeyRow(row.kid)).toString('utf8'))
        : undefined,
    publicKeyPem:
      known?.publicKeyPem ??
      createPublicKey({ key: row.public_jwk, format: 'jwk' }).export({ format: 'pem', type: 'spki' }).toString(),
    publicJwk: row.public_jwk,
    createdAt: row.created_at,
    verifyUntil: row.verify_until,
  };
}

/**
 * The signing keys this instance trusts, loaded from the database: the active key and the retired ones
 * still within their verify window. Reloaded at most every few seconds, and sooner for an unknown kid.
 */
export class KeyRing {
  private keys = new Map<string, LoadedKey>();
  private loadedAt = 0;
  private forcedAt = 0;
  private loading: Promise<void> | undefined;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly keyEncryption: KeyEncryption,
    private readonly tokenTtlSeconds: number,
  ) {}

  /** The newest active key; creates one when the database has none. */
  async signingKey(): Promise<ActiveSigningKey> {
    await this.refreshIfStale();
    let active = this.activeKey();
    if (!active) {
      await ensureSigningKey(this.db, this.keyEncryption, this.tokenTtlSeconds);
      await this.refresh();
      active = this.activeKey();
    }
    return { kid: active!.kid, privateKeyPem: active!.privateKeyPem! };
  }

  /** The public key (PEM) of a key that may verify tokens now, or undefined. */
  async verificationKey(kid: unknown): Promise<string | undefined> {
    if (typeof kid !== 'string') return undefined;
    await this.refreshIfStale();
    if (!this.usable(kid) && Date.now() - this.forcedAt >= UNKNOWN_KID_REFRESH_MS) {
      this.forcedAt = Date.now();
      await this.refresh();
    }
    return this.usable(kid)?.publicKeyPem;
  }

  /** The JWKS document: public keys only. */
  async jwks(): Promise<{ keys: PublicJwk[] }> {
    await this.refreshIfStale();
    return { keys: [...this.keys.values()].filter((k) => this.usable(k.kid)).map((k) => k.publicJwk) };
  }

  private usable(kid: string): LoadedKey | undefined {
    const key = this.keys.get(kid);
    return key && (key.verifyUntil === null || key.verifyUntil.getTime() > Date.now()) ? key : undefined;
  }

  private activeKey(): LoadedKey | undefined {
    let newest: LoadedKey | undefined;
    for (const key of this.keys.values()) {
      if (key.privateKeyPem && (!newest || key.createdAt > newest.createdAt)) newest = key;
    }
    return newest;
  }

  private refreshIfStale(): Promise<void> | undefined {
    return Date.now() - this.loadedAt >= KEY_RING_REFRESH_MS ? this.refresh() : undefined;
  }

  private refresh(): Promise<void> {
    this.loading ??= this.load().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  private async load(): Promise<void> {
    const rows = await this.db
      .selectFrom('signing_keys')
      .selectAll()
      .where((eb) => eb.or([eb('retired_at', 'is', null), eb('verify_until', '>', sql<Date>`now()`)]))
      .execute();
    this.keys = new Map(rows.map((row) => [row.kid, toLoadedKey(row, this.keyEncryption, this.keys.get(row.kid))]));
    this.loadedAt = Date.now();
  }
}
