import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { loadConfig } from '../../src/config.js';
import { decodeKeyText, KeyEncryption, keyEncryptionKey, sealedKeyId } from '../../src/identity/key-encryption.js';
import { ensureKeyFile, loadKeyEncryption } from '../../src/identity/key-encryption-keys.js';

const kek = (source = 'SECRETS_KEY') => keyEncryptionKey(randomBytes(32), source);
const ROW = 'signing_keys/kid-1';

function tempDir(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'kek-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('sealed: versioned, names its key, opens to the plaintext, and hides it', async (t) => {
  const keys = new KeyEncryption(kek());
  const plaintext = '-----BEGIN PRIVATE KEY-----\nMIGHAgEA\n-----END PRIVATE KEY-----\n';
  const sealed = keys.seal(plaintext, ROW);
  t.match(sealed, new RegExp(`^v1\\.${keys.current.id}\\.[A-Za-z0-9_-]{16}\\.[A-Za-z0-9_-]+$`));
  t.equal(sealedKeyId(sealed), keys.current.id);
  t.notMatch(sealed, /PRIVATE|MIGH/);
  t.equal(keys.open(sealed, ROW).toString('utf8'), plaintext);
  t.not(keys.seal(plaintext, ROW), sealed, 'a fresh IV each time');
  const bytes = randomBytes(32);
  t.same(keys.open(keys.seal(bytes, ROW), ROW), bytes);
});

t.test('the key id is a fingerprint of the key: stable, and different for another key', async (t) => {
  const key = randomBytes(32);
  t.equal(keyEncryptionKey(key, 'a').id, keyEncryptionKey(Buffer.from(key), 'b').id);
  t.match(keyEncryptionKey(key, 'a').id, /^[0-9a-f]{12}$/);
  t.not(keyEncryptionKey(randomBytes(32), 'a').id, keyEncryptionKey(key, 'a').id);
});

t.test('what does not open gets a message naming the row and the keys, never garbage', async (t) => {
  const keys = new KeyEncryption(kek());
  const sealed = keys.seal('secret', ROW);
  const other = new KeyEncryption(kek());
  t.throws(() => other.open(sealed, ROW), {
    message: `${ROW} is sealed under key-encryption key ${keys.current.id}, which is not configured (configured: ${other.current.id} (SECRETS_KEY)). Set SECRETS_KEY to the key it was sealed with, or add that key to SECRETS_KEY_PREVIOUS while rotating.`,
  });
  t.throws(() => keys.open(sealed, 'signing_keys/kid-2'), {
    message: `signing_keys/kid-2 does not decrypt under key-encryption key ${keys.current.id}: it was altered, or copied from another row`,
  });
  const [v, id, iv, body] = sealed.split('.');
  const flipped = Buffer.from(body, 'base64url');
  flipped[0] ^= 1;
  t.throws(
    () => keys.open([v, id, iv, flipped.toString('base64url')].join('.'), ROW),
    { message: /does not decrypt/ },
    'altered ciphertext',
  );
  t.throws(() => keys.open([v, id, iv, 'AAAA'].join('.'), ROW), { message: /does not decrypt/ }, 'truncated');
  t.throws(() => keys.open('-----BEGIN PRIVATE KEY-----', ROW), {
    message: `${ROW} is not a sealed secret (expected v1.<key id>.<iv>.<ciphertext>)`,
  });
  t.throws(() => keys.open(`v2.${id}.${iv}.${body}`, ROW), { message: /is not a sealed secret/ });
  t.throws(() => keys.open(null, ROW), {
    message: `${ROW} is stored in plaintext (written by an older version): restart the service to seal it`,
  });
});

t.test('rotation: a previous key still opens, only the current key seals', async (t) => {
  const old = new KeyEncryption(kek());
  const sealedOld = old.seal('secret', ROW);
  const rotated = new KeyEncryption(kek(), [kek('SECRETS_KEY_PREVIOUS'), old.current]);
  t.equal(rotated.open(sealedOld, ROW).toString(), 'secret');
  t.notOk(rotated.isCurrent(sealedOld));
  const sealedNew = rotated.seal('secret', ROW);
  t.ok(rotated.isCurrent(sealedNew));
  t.equal(sealedKeyId(sealedNew), rotated.current.id);
  t.match(
    rotated.describe(),
    new RegExp(
      `^${rotated.current.id} \\(SECRETS_KEY\\), [0-9a-f]{12} \\(SECRETS_KEY_PREVIOUS\\), ${old.current.id} \\(SECRETS_KEY\\)$`,
    ),
  );
});

t.test('a key is 32 bytes in base64, base64url or hex; anything else is refused without repeating it', async (t) => {
  const key = randomBytes(32);
  for (const text of [
    key.toString('base64'),
    key.toString('base64').replace(/=$/, ''),
    key.toString('base64url'),
    key.toString('hex'),
    key.toString('hex').toUpperCase(),
    `  ${key.toString('base64')}\n`,
  ]) {
    t.same(decodeKeyText(text, 'SECRETS_KEY'), key, text);
  }
  for (const text of [
    '',
    'hunter2',
    randomBytes(16).toString('base64'),
    randomBytes(33).toString('base64'),
    randomBytes(31).toString('hex'),
    `${key.toString('hex').slice(1)}g`,
  ]) {
    t.throws(() => decodeKeyText(text, 'SECRETS_KEY'), {
      message: `SECRETS_KEY must be 32 random bytes in base64 or hex (e.g. the output of "openssl rand -base64 32"), got ${text.trim().length} characters`,
    });
  }
});

t.test('PostgreSQL without a key: refused when the key is needed, naming both variables', async (t) => {
  t.throws(() => loadKeyEncryption(loadConfig({ DATABASE_URL: 'postgres://db/ext' }).secretsKey, t.fail), {
    message:
      /^DATABASE_URL is set but neither SECRETS_KEY nor SECRETS_KEY_FILE is: every process sharing the database needs the same key-encryption key/,
  });
});

t.test('SECRETS_KEY_FILE: read, never created; a file others can read is reported', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'kek');
  const key = randomBytes(32);
  const settings = loadConfig({ SECRETS_KEY_FILE: path }).secretsKey;
  t.throws(() => loadKeyEncryption(settings, t.fail), { message: `SECRETS_KEY_FILE ${path} cannot be read (ENOENT)` });
  t.notOk(existsSync(path));
  writeFileSync(path, `${key.toString('base64')}\n`, { mode: 0o600 });
  const keys = loadKeyEncryption(settings, t.fail);
  t.same(keys.current, keyEncryptionKey(key, `SECRETS_KEY_FILE ${path}`));
  chmodSync(path, 0o644);
  const notices: string[] = [];
  loadKeyEncryption(settings, (message) => notices.push(message));
  t.same(notices, [`SECRETS_KEY_FILE ${path} can be read by other users (mode 644): run chmod 600 ${path}`]);
  writeFileSync(path, 'oops');
  t.throws(() => loadKeyEncryption(settings, () => {}), {
    message: `SECRETS_KEY_FILE ${path} must be 32 random bytes in base64 or hex (e.g. the output of "openssl rand -base64 32"), got 4 characters`,
  });
});

t.test('the embedded default: created once with mode 600 (saying so), then reused', async (t) => {
  const dir = tempDir(t);
  const settings = loadConfig({ DATA_DIR: join(dir, 'nested', 'data') }).secretsKey;
  const path = join(dir, 'nested', 'data.secrets-key');
  const notices: string[] = [];
  const first = loadKeyEncryption(settings, (message) => notices.push(message));
  t.equal(statSync(path).mode & 0o777, 0o600);
  t.match(notices, [
    /^Created the key-encryption key file .*data\.secrets-key \(mode 600\)\. .*never in the same place as the database or its backups/,
  ]);
  t.same(decodeKeyText(readFileSync(path, 'utf8'), 'file'), first.current.key);
  t.equal(first.current.source, `key file ${path}`);
  const second = loadKeyEncryption(settings, t.fail);
  t.equal(second.current.id, first.current.id, 'the same key on the next start, and no notice');
  t.same(ensureKeyFile(path, t.fail), first.current.key);
});

t.test(
  'the embedded default where it cannot be created: one line naming the way out',
  { skip: process.getuid?.() === 0 ? 'root may write anywhere' : false },
  async (t) => {
    const dir = tempDir(t);
    chmodSync(dir, 0o500);
    t.teardown(() => chmodSync(dir, 0o700));
    const settings = loadConfig({ DATA_DIR: join(dir, 'data') }).secretsKey;
    t.throws(() => loadKeyEncryption(settings, t.fail), {
      message: `Could not create the key-encryption key file ${join(dir, 'data.secrets-key')} (EACCES): set SECRETS_KEY or SECRETS_KEY_FILE`,
    });
  },
);
