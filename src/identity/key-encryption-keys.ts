import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { decodeKeyText, KeyEncryption, keyEncryptionKey } from './key-encryption.js';

/**
 * Where the key-encryption key comes from, as config.ts decides it from the environment: the key file is read (or
 * created) only when a process needs the key, so a process that never opens a secret (e.g. `npm run migrate`) needs no key.
 */
export interface SecretsKeySettings {
  current:
    | { from: 'SECRETS_KEY'; key: Buffer }
    | { from: 'SECRETS_KEY_FILE'; path: string }
    /** Embedded store without a key: a file beside (not inside) DATA_DIR, created on first use. */
    | { from: 'default file'; path: string }
    /** PostgreSQL without a key: refused when a key is needed, since every process sharing the database needs the same one. */
    | { from: 'none' };
  /** SECRETS_KEY_PREVIOUS: more keys accepted for opening secrets during a rotation, never used to seal. */
  previous: Buffer[];
}

/** Messages for the operator (the server logs them as warnings; the admin CLI prints them on stderr). */
type Notice = (message: string) => void;

function errorCode(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? String(err);
}

/** A key file holds the key as one line of base64 or hex. Group or world access is reported, not refused: secret mounts are often 0644. */
function readKeyFile(path: string, name: string, notice: Notice): Buffer {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`${name} ${path} cannot be read (${errorCode(err)})`);
  }
  const mode = statSync(path).mode & 0o777;
  if (mode & 0o077)
    notice(`${name} ${path} can be read by other users (mode ${mode.toString(8)}): run chmod 600 ${path}`);
  return decodeKeyText(text, `${name} ${path}`);
}

/**
 * Creates the key file with a new random key (mode 600). Written aside and linked into place, so a process that dies
 * half-way never leaves a partial key behind, and of two that start at once, the first one's key is kept.
 */
function createKeyFile(path: string, notice: Notice): void {
  const partial = `${path}.${process.pid}.partial`;
  try {
    mkdirSync(dirname(path), { recursive: true });
    const fd = openSync(partial, 'wx', 0o600);
    try {
      writeSync(fd, `${randomBytes(32).toString('base64')}\n`);
    } finally {
      closeSync(fd);
    }
    linkSync(partial, path);
    notice(
      `Created the key-encryption key file ${path} (mode 600). It encrypts the signing keys and other secrets stored in the ` +
        'database: keep a copy of it, but never in the same place as the database or its backups (with both, anyone can sign tokens; without it, the stored secrets are lost).',
    );
  } catch (err) {
    if (errorCode(err) !== 'EEXIST')
      throw new Error(
        `Could not create the key-encryption key file ${path} (${errorCode(err)}): set SECRETS_KEY or SECRETS_KEY_FILE`,
      );
  } finally {
    rmSync(partial, { force: true });
  }
}

/** The key in the file at `path`, created first when there is none. */
export function ensureKeyFile(path: string, notice: Notice): Buffer {
  if (!existsSync(path)) createKeyFile(path, notice);
  return readKeyFile(path, 'the key-encryption key file', notice);
}

/** The configured key-encryption keys; reads or creates the key file, and refuses PostgreSQL without a key. */
export function loadKeyEncryption(settings: SecretsKeySettings, notice: Notice): KeyEncryption {
  const previous = settings.previous.map((key) => keyEncryptionKey(key, 'SECRETS_KEY_PREVIOUS'));
  const { current } = settings;
  switch (current.from) {
    case 'SECRETS_KEY':
      return new KeyEncryption(keyEncryptionKey(current.key, 'SECRETS_KEY'), previous);
    case 'SECRETS_KEY_FILE':
      return new KeyEncryption(
        keyEncryptionKey(readKeyFile(current.path, 'SECRETS_KEY_FILE', notice), `SECRETS_KEY_FILE ${current.path}`),
        previous,
      );
    case 'default file':
      return new KeyEncryption(
        keyEncryptionKey(ensureKeyFile(current.path, notice), `key file ${current.path}`),
        previous,
      );
    case 'none':
      throw new Error(
        'DATABASE_URL is set but neither SECRETS_KEY nor SECRETS_KEY_FILE is: every process sharing the database needs the same key-encryption key (32 random bytes, e.g. "openssl rand -base64 32")',
      );
  }
}
