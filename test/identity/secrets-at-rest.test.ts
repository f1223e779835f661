import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { pino } from 'pino';
import t from 'tap';
import { secretsCommands } from '../../src/admin/secrets.js';
import { loadConfig } from '../../src/config.js';
import { CursorSeal } from '../../src/identity/cursor-seal.js';
import { KeyEncryption, keyEncryptionKey, sealedKeyId } from '../../src/identity/key-encryption.js';
import { sealSecrets, serviceSecretRow, signingKeyRow } from '../../src/identity/secrets-at-rest.js';
import { generateSigningKey, type KeyRing, rotateSigningKey } from '../../src/identity/signing-keys.js';
import { TokenSigner } from '../../src/identity/tokens.js';
import { createServices, tokenSettings } from '../../src/services.js';
import { secondPool, testDatabase } from '../helpers/database.js';
import { createTestIntegration } from '../helpers/identity.js';

const { db } = await testDatabase();
const config = { ...loadConfig({}), authStateTtlMs: 0 };
const keysOf = (current = randomBytes(32), ...previous: Buffer[]) =>
  new KeyEncryption(
    keyEncryptionKey(current, 'SECRETS_KEY'),
    previous.map((key) => keyEncryptionKey(key, 'SECRETS_KEY_PREVIOUS')),
  );
const integration = await createTestIntegration(db);
const subject = { ...integration, phiMode: 'no_phi' as const, scopes: ['external:patients:read'] };

/** Each test starts from a database without secrets: signing keys and service secrets are global. */
async function clearSecrets() {
  await db.deleteFrom('signing_keys').execute();
  await db.deleteFrom('service_secrets').execute();
}

/** Rows as a database written before this change holds them: an active signing key and the cursor key in plaintext. */
async function legacyRows() {
  const signingKey = generateSigningKey();
  const cursorKey = randomBytes(32);
  await db
    .insertInto('signing_keys')
    .values({
      kid: signingKey.kid,
      algorithm: 'ES256',
      private_key_pem: signingKey.privateKeyPem,
      public_jwk: JSON.stringify(signingKey.publicJwk),
    })
    .execute();
  await db.insertInto('service_secrets').values({ purpose: 'list-cursor', secret: cursorKey }).execute();
  return { signingKey, cursorKey };
}

async function stored() {
  const keys = await db
    .selectFrom('signing_keys')
    .select(['kid', 'private_key_pem', 'private_key_sealed'])
    .orderBy('created_at')
    .execute();
  const secrets = await db.selectFrom('service_secrets').select(['purpose', 'secret', 'secret_sealed']).execute();
  return { keys, secrets, sealed: [...keys.map((k) => k.private_key_sealed), ...secrets.map((s) => s.secret_sealed)] };
}

/** A token signed by the service with `keys`, then authenticated by another instance with `keys`. */
async function roundTrip(keys: KeyEncryption) {
  const services = createServices(config, db, keys, pino({ enabled: false }));
  const { accessToken } = await services.tokenSigner.sign(subject);
  await services.authenticator.authenticate(`Bearer ${accessToken}`);
  return JSON.parse(Buffer.from(accessToken.split('.')[0], 'base64url').toString()).kid as string;
}

t.test('a start seals the plaintext rows of an older database, keeping the same keys', async (t) => {
  await clearSecrets();
  const legacy = await legacyRows();
  const legacySigner = new TokenSigner(
    {
      signingKey: async () => ({ kid: legacy.signingKey.kid, privateKeyPem: legacy.signingKey.privateKeyPem }),
    } as KeyRing,
    tokenSettings(config),
  );
  const issuedBefore = (await legacySigner.sign(subject)).accessToken;
  const keys = keysOf();

  t.same(await sealSecrets(db, keys), { sealed: 2, rewrapped: 0, underPreviousKey: 0, total: 2 });
  const after = await stored();
  t.same(
    [...after.keys.map((k) => k.private_key_pem), ...after.secrets.map((s) => s.secret)],
    [null, null],
    'no plaintext left',
  );
  for (const sealed of after.sealed) {
    t.equal(sealedKeyId(sealed!), keys.current.id);
    t.notMatch(sealed, /PRIVATE KEY/);
    t.notOk(Buffer.from(sealed!).includes(legacy.cursorKey));
  }
  t.equal(
    keys.open(after.keys[0].private_key_sealed, signingKeyRow(legacy.signingKey.kid)).toString(),
    legacy.signingKey.privateKeyPem,
  );
  t.same(
    keys.open(after.secrets[0].secret_sealed, serviceSecretRow('list-cursor')),
    legacy.cursorKey,
    'the cursor key is the same: cursors handed out before still open',
  );

  const services = createServices(config, db, keys, pino({ enabled: false }));
  t.ok(await services.authenticator.authenticate(`Bearer ${issuedBefore}`), 'a token issued before still verifies');
  t.equal(await roundTrip(keys), legacy.signingKey.kid, 'and the same key signs new ones');

  t.same(
    await sealSecrets(db, keys),
    { sealed: 0, rewrapped: 0, underPreviousKey: 0, total: 2 },
    'the next start has nothing to do',
  );
  t.same((await stored()).sealed, after.sealed, 'and changes nothing');
});

t.test('what the service creates is sealed: signing keys and the cursor key', async (t) => {
  await clearSecrets();
  const keys = keysOf();
  await rotateSigningKey(db, keys, config.tokenTtlSeconds);
  await roundTrip(keys);
  await new CursorSeal(db, keys).seal({ after: ['x'] }, Buffer.from('test binding'));
  const { keys: signingKeys, secrets, sealed } = await stored();
  t.equal(signingKeys.length, 1);
  t.equal(secrets.length, 1);
  t.same([...signingKeys.map((k) => k.private_key_pem), ...secrets.map((s) => s.secret)], [null, null]);
  t.ok(sealed.every((value) => sealedKeyId(value!) === keys.current.id));
  const raw = await db.selectFrom('signing_keys').select(sql<string>`signing_keys::text`.as('row')).execute();
  t.notMatch(raw[0].row, /BEGIN|PRIVATE/);
});

t.test(
  'KEK rotation: the old key keeps opening, rewrap moves everything to the new one, then the old one can go',
  async (t) => {
    await clearSecrets();
    const [oldKey, newKey] = [randomBytes(32), randomBytes(32)];
    const before = keysOf(oldKey);
    await rotateSigningKey(db, before, config.tokenTtlSeconds);
    await rotateSigningKey(db, before, config.tokenTtlSeconds);
    await new CursorSeal(db, before).seal({ after: ['x'] }, Buffer.from('test binding'));
    const kid = await roundTrip(before);

    const rotating = keysOf(newKey, oldKey);
    t.same(
      await sealSecrets(db, rotating),
      { sealed: 0, rewrapped: 0, underPreviousKey: 3, total: 3 },
      'a start does not rewrap',
    );
    t.equal(await roundTrip(rotating), kid, 'rows under the previous key are read');

    const { json, text } = await secretsCommands.rewrap.run({ db, config, options: {}, keyEncryption: () => rotating });
    t.same(json, { kek_id: rotating.current.id, secrets: 3, rewrapped: 3, sealed_from_plaintext: 0 });
    t.match(
      text,
      new RegExp(
        `^Every stored secret \\(3\\) is sealed under key-encryption key ${rotating.current.id}; SECRETS_KEY_PREVIOUS is no longer needed`,
      ),
    );
    const sealed = (await stored()).sealed;
    t.same(
      new Set(sealed.map((value) => sealedKeyId(value!))),
      new Set([rotating.current.id]),
      `nothing left under ${before.current.id}`,
    );
    t.equal(
      (await secretsCommands.rewrap.run({ db, config, options: {}, keyEncryption: () => rotating })).json.rewrapped,
      0,
      'a second rewrap has nothing to do',
    );

    const after = keysOf(newKey);
    t.same(
      await sealSecrets(db, after),
      { sealed: 0, rewrapped: 0, underPreviousKey: 0, total: 3 },
      'the previous key is no longer needed',
    );
    t.equal(await roundTrip(after), kid, 'the same signing key, opened with the new KEK alone');

    await t.rejects(
      sealSecrets(db, before),
      {
        message: new RegExp(
          `^signing_keys/\\S+ is sealed under key-encryption key ${after.current.id}, which is not configured \\(configured: ${before.current.id} \\(SECRETS_KEY\\)\\)`,
        ),
      },
      'the old key alone is refused at start, naming both key ids',
    );
  },
);

t.test('a sealed value moved to another row does not open there: the start refuses', async (t) => {
  await clearSecrets();
  const keys = keysOf();
  const first = await rotateSigningKey(db, keys, config.tokenTtlSeconds);
  const second = await rotateSigningKey(db, keys, config.tokenTtlSeconds);
  const secondSealed = (
    await db
      .selectFrom('signing_keys')
      .select('private_key_sealed')
      .where('kid', '=', second.kid)
      .executeTakeFirstOrThrow()
  ).private_key_sealed;
  await db.updateTable('signing_keys').set({ private_key_sealed: secondSealed }).where('kid', '=', first.kid).execute();
  await t.rejects(sealSecrets(db, keys), {
    message: `signing_keys/${first.kid} does not decrypt under key-encryption key ${keys.current.id}: it was altered, or copied from another row`,
  });
});

t.test('the database refuses a row with both forms or neither', async (t) => {
  await clearSecrets();
  const key = generateSigningKey();
  const row = { kid: key.kid, algorithm: 'ES256' as const, public_jwk: JSON.stringify(key.publicJwk) };
  await t.rejects(db.insertInto('signing_keys').values(row).execute(), { code: '23514' });
  await t.rejects(
    db
      .insertInto('signing_keys')
      .values({ ...row, private_key_pem: key.privateKeyPem, private_key_sealed: 'v1.x.y.z' })
      .execute(),
    { code: '23514' },
  );
  await t.rejects(db.insertInto('service_secrets').values({ purpose: 'p' }).execute(), { code: '23514' });
});

t.test(
  'processes starting at once on PostgreSQL seal each plaintext row once',
  { skip: process.env.TEST_DATABASE_URL ? false : 'needs PostgreSQL (PGlite is one session)' },
  async (t) => {
    await clearSecrets();
    const legacy = await legacyRows();
    const other = await secondPool(t, 2);
    const keys = keysOf();
    const reports = await Promise.all([sealSecrets(db, keys), sealSecrets(other, keys), sealSecrets(db, keys)]);
    t.equal(
      reports.reduce((sum, report) => sum + report.sealed, 0),
      2,
      'two rows, sealed once each',
    );
    const { keys: signingKeys, secrets } = await stored();
    t.equal(
      keys.open(signingKeys[0].private_key_sealed, signingKeyRow(legacy.signingKey.kid)).toString(),
      legacy.signingKey.privateKeyPem,
    );
    t.same(keys.open(secrets[0].secret_sealed, serviceSecretRow('list-cursor')), legacy.cursorKey);
  },
);
