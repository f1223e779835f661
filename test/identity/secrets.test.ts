import { randomBytes, scryptSync } from 'node:crypto';
import t from 'tap';
import {
  dummySecretHash,
  hashSecret,
  HASHING_LIMITS,
  newClientId,
  newClientSecret,
  secretLookupId,
  verifySecret,
} from '../../src/identity/secrets.js';

t.test('client ids and secrets are random and high-entropy', async (t) => {
  t.match(newClientId(), /^cli_[A-Za-z0-9_-]{22}$/, '128 bits');
  t.match(newClientSecret(), /^sk_[A-Za-z0-9_-]{43}$/, '256 bits');
  t.equal(new Set(Array.from({ length: 100 }, newClientSecret)).size, 100);
});

t.test('scrypt hashes carry their salt and parameters, and verify only the right secret', async (t) => {
  const secret = newClientSecret();
  const [first, second] = [await hashSecret(secret), await hashSecret(secret)];
  t.match(first, /^\$scrypt\$ln=14,r=8,p=1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
  t.not(first, second, 'a salt per hash');
  t.equal(await verifySecret(secret, first), true);
  t.equal(await verifySecret(secret, second), true);
  t.equal(await verifySecret(`${secret}x`, first), false);
  t.equal(await verifySecret('', first), false);
  t.equal(await verifySecret(secret, 'not-a-hash'), false);
  t.notOk(first.includes(secret));
});

t.test('a hash made with other parameters still verifies (parameters are read from the string)', async (t) => {
  const salt = randomBytes(16);
  const hash = scryptSync('sk_old', salt, 32, { N: 1024, r: 8, p: 1 });
  const stored = `$scrypt$ln=10,r=8,p=1$${salt.toString('base64url')}$${hash.toString('base64url')}`;
  t.equal(await verifySecret('sk_old', stored), true);
  t.equal(await verifySecret('sk_new', stored), false);
});

t.test('the dummy hash for unknown clients costs a real verification and matches nothing', async (t) => {
  const dummy = await dummySecretHash();
  t.equal(dummy, await dummySecretHash(), 'computed once');
  t.match(dummy, /^\$scrypt\$ln=14,r=8,p=1\$/, 'same parameters, same cost');
  t.equal(await verifySecret('', dummy), false);
});

t.test('the lookup id is derived from the secret, so a presented secret names one stored hash', async (t) => {
  const secret = newClientSecret();
  t.equal(secretLookupId(secret), secretLookupId(secret));
  t.not(secretLookupId(secret), secretLookupId(newClientSecret()));
  t.match(secretLookupId(secret), /^sec_[A-Za-z0-9_-]{22}$/);
});

t.test(
  'hashes asked for at once: those past the running ones and the line are refused at once with 503 and Retry-After',
  async (t) => {
    const stored = await hashSecret('sk_flood');
    const asked = HASHING_LIMITS.running + HASHING_LIMITS.waiting + 3;
    const outcomes = await Promise.all(
      Array.from({ length: asked }, () =>
        verifySecret('sk_flood', stored).catch((err: { status: number; headers: Record<string, string> }) => err),
      ),
    );
    const refused = outcomes.filter((outcome) => outcome !== true);
    t.equal(refused.length, 3);
    t.match(
      refused,
      Array(3).fill({ code: 'PLATFORM_SERVICE_UNAVAILABLE', status: 503, headers: { 'retry-after': '1' } }),
    );
    t.equal(await verifySecret('sk_flood', stored), true, 'a place is free again once they are done');
  },
);

t.test('a dummy hash refused while the hashing gate is full is made by a later caller', async (t) => {
  const stored = await hashSecret('sk_busy');
  const busy = Array.from({ length: HASHING_LIMITS.running + HASHING_LIMITS.waiting }, () =>
    verifySecret('sk_busy', stored),
  );
  const params = { N: 1024, r: 8, p: 1 };
  await t.rejects(dummySecretHash(params), { code: 'PLATFORM_SERVICE_UNAVAILABLE' });
  await Promise.all(busy);
  t.match(await dummySecretHash(params), /^\$scrypt\$ln=10,/);
});
