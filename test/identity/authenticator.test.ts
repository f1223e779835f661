import { createHmac, createPrivateKey, generateKeyPairSync, sign as signWith, type KeyObject } from 'node:crypto';
import { sql, type KyselyPlugin } from 'kysely';
import t from 'tap';
import { pino } from 'pino';
import { revokeIntegrationTokens, setIntegrationStatus } from '../../src/admin/integration.js';
import { revokeToken } from '../../src/admin/token.js';
import { loadConfig, type Config } from '../../src/config.js';
import { PlatformError } from '../../src/shared/platform-error.js';
import { RequestError } from '../../src/shared/request-error.js';
import { Authenticator, WWW_AUTHENTICATE } from '../../src/identity/authenticator.js';
import { ExtensionPolicies } from '../../src/identity/extension-policies.js';
import { generateSigningKey, rotateSigningKey, type KeyRing } from '../../src/identity/signing-keys.js';
import { signingKeyRow } from '../../src/identity/secrets-at-rest.js';
import { TokenSigner, createTokenVerifier } from '../../src/identity/tokens.js';
import { createServices, tokenSettings } from '../../src/services.js';
import { testDatabase } from '../helpers/database.js';
import { createTestIntegration, type TestIntegration } from '../helpers/identity.js';
import { testKeyEncryption } from '../helpers/secrets.js';

const { db } = await testDatabase();
const config: Config = { ...loadConfig({}), authStateTtlMs: 0 };

function services(overrides: Partial<Config> = {}, database = db) {
  return createServices({ ...config, ...overrides }, database, testKeyEncryption, pino({ enabled: false }));
}

async function tokenFor(integration: TestIntegration, app = services()) {
  return (await app.tokenSigner.sign({ ...integration, phiMode: 'no_phi', scopes: ['external:patients:read'] }))
    .accessToken;
}

/** The refusal's code, status and WWW-Authenticate, or 'accepted'. */
async function outcome(authenticate: () => Promise<unknown>) {
  try {
    await authenticate();
    return 'accepted';
  } catch (err) {
    if (err instanceof RequestError)
      return {
        status: err.status,
        code: err.code,
        message: err.message,
        challenge: err.extra.headers?.['www-authenticate'],
      };
    if (err instanceof PlatformError) return { status: err.status, code: err.code };
    throw err;
  }
}

const b64url = (value: object | string) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
const decodePart = (token: string, index: number) =>
  JSON.parse(Buffer.from(token.split('.')[index], 'base64url').toString());

function es256(header: object, payload: object, key: KeyObject | string): string {
  const input = `${b64url(header)}.${b64url(payload)}`;
  const privateKey = typeof key === 'string' ? createPrivateKey(key) : key;
  return `${input}.${signWith('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}

function hs256(header: object, payload: object, secret: string): string {
  const input = `${b64url(header)}.${b64url(payload)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

const integration = await createTestIntegration(db);
const app = services();
const genuine = await tokenFor(integration, app);
const header = decodePart(genuine, 0);
const claims = decodePart(genuine, 1);
const activeKey = await db
  .selectFrom('signing_keys')
  .selectAll()
  .where('kid', '=', header.kid)
  .executeTakeFirstOrThrow();
const activePem = testKeyEncryption.open(activeKey.private_key_sealed, signingKeyRow(activeKey.kid)).toString('utf8');
const now = Math.floor(Date.now() / 1000);

t.test('a genuine token gives the principal and the policy', async (t) => {
  const { principal, policy } = await app.authenticator.authenticate(`Bearer ${genuine}`);
  t.match(principal, {
    agencyId: integration.agencyId,
    extensionId: integration.extensionId,
    clientId: integration.clientId,
    phiMode: 'no_phi',
    tokenId: claims.jti,
  });
  t.same([...principal.scopes], ['external:patients:read']);
  t.equal(principal.expiresAt.getTime() - principal.issuedAt.getTime(), 900_000);
  t.match(policy, {
    agencyId: integration.agencyId,
    extensionId: integration.extensionId,
    status: 'active',
    rateLimitPerMinute: 600,
    dailyQuota: 50_000,
    dailyCostBudget: null,
  });
  t.ok(policy.capabilities.has('referrals.create'));
  t.same(header, { alg: 'ES256', typ: 'at+jwt', kid: activeKey.kid });
  t.same(Object.keys(claims).sort(), [
    'agency_id',
    'aud',
    'client_id',
    'exp',
    'iat',
    'iss',
    'jti',
    'phi_mode',
    'scope',
    'sub',
  ]);
  t.equal(
    await outcome(() => app.authenticator.authenticate(`bearer ${genuine}`)),
    'accepted',
    'the scheme is case-insensitive',
  );
});

t.test('tokens with one scope claim share one scope set; another claim gets its own', async (t) => {
  const scopesFor = async (scopes: string[]) => {
    const { accessToken } = await app.tokenSigner.sign({ ...integration, phiMode: 'no_phi', scopes });
    return (await app.authenticator.authenticate(`Bearer ${accessToken}`)).principal.scopes;
  };
  const [first, second] = [await scopesFor(['external:patients:read']), await scopesFor(['external:patients:read'])];
  t.equal(first, second);
  const wider = await scopesFor(['external:patients:read', 'external:referrals:write']);
  t.same([...wider], ['external:patients:read', 'external:referrals:write']);
  t.same([...first], ['external:patients:read'], 'a set is never widened by a later claim');
});

t.test('a missing or malformed Authorization header: PLATFORM_AUTHENTICATION_REQUIRED', async (t) => {
  for (const authorization of [
    undefined,
    '',
    'Bearer',
    'Bearer ',
    `Basic ${genuine}`,
    genuine,
    `Bearer ${genuine} extra`,
    'Bearer a,b',
  ]) {
    t.match(
      await outcome(() => app.authenticator.authenticate(authorization)),
      { status: 401, code: 'PLATFORM_AUTHENTICATION_REQUIRED', challenge: WWW_AUTHENTICATE },
      String(authorization),
    );
  }
});

t.test('attack matrix: nothing forged, foreign or malformed is accepted, and all get one answer', async (t) => {
  const publicPem = (await app.keyRing.verificationKey(header.kid))!;
  const stranger = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  const { exp, ...noExp } = claims;
  const retired = generateSigningKey();
  await db
    .insertInto('signing_keys')
    .values({
      kid: retired.kid,
      algorithm: 'ES256',
      private_key_sealed: testKeyEncryption.seal(retired.privateKeyPem, signingKeyRow(retired.kid)),
      public_jwk: JSON.stringify(retired.publicJwk),
      retired_at: sql`now() - interval '2 hours'`,
      verify_until: sql`now() - interval '1 hour'`,
    })
    .execute();
  const [h, p, s] = genuine.split('.');
  const attacks: Record<string, string> = {
    'alg none, no signature': `${b64url({ ...header, alg: 'none' })}.${p}.`,
    'alg none, original signature': `${b64url({ ...header, alg: 'none' })}.${p}.${s}`,
    'HS256 keyed with the public key PEM': hs256({ ...header, alg: 'HS256' }, claims, publicPem),
    'HS256 keyed with the PEM without its final newline': hs256(
      { ...header, alg: 'HS256' },
      claims,
      publicPem.trimEnd(),
    ),
    'HS256 keyed with the PEM with CRLF line ends': hs256(
      { ...header, alg: 'HS256' },
      claims,
      publicPem.replace(/\n/g, '\r\n'),
    ),
    'HS256 keyed with the PEM plus trailing whitespace': hs256({ ...header, alg: 'HS256' }, claims, `${publicPem}  \n`),
    'HS256 keyed with the JWK': hs256({ ...header, alg: 'HS256' }, claims, JSON.stringify(activeKey.public_jwk)),
    'ES384 claimed': es256({ ...header, alg: 'ES384' }, claims, stranger),
    'unknown kid': es256({ ...header, kid: 'no-such-key' }, claims, stranger),
    'no kid': es256({ alg: 'ES256', typ: 'at+jwt' }, claims, stranger),
    'known kid, signed by another key': es256(header, claims, stranger),
    'wrong audience': es256(header, { ...claims, aud: 'https://elsewhere.example/api' }, activePem),
    'wrong issuer': es256(header, { ...claims, iss: 'https://evil.example' }, activePem),
    'wrong typ': es256({ ...header, typ: 'JWT' }, claims, activePem),
    'missing exp': es256(header, noExp, activePem),
    'phi_mode outside the enum': es256(header, { ...claims, phi_mode: 'all' }, activePem),
    'agency_id not a string': es256(header, { ...claims, agency_id: ['a', 'b'] }, activePem),
    'tampered agency_id, original signature': `${h}.${b64url({ ...claims, agency_id: 'another-agency' })}.${s}`,
    'tampered scope, original signature': `${h}.${b64url({ ...claims, scope: 'external:remittances:read' })}.${s}`,
    'tampered header kid': `${b64url({ ...header, kid: retired.kid })}.${p}.${s}`,
    'signature truncated': `${h}.${p}.${s.slice(0, -4)}`,
    'signed by a rotated-out key past verify_until': es256(
      { ...header, kid: retired.kid },
      claims,
      retired.privateKeyPem,
    ),
    'not a JWT': 'abc.def.ghi',
    'two segments': `${h}.${p}`,
  };
  for (const claim of ['iat', 'jti', 'sub', 'client_id', 'agency_id', 'phi_mode', 'scope', 'iss', 'aud']) {
    const { [claim]: _, ...without } = claims;
    attacks[`missing ${claim}`] = es256(header, without, activePem);
  }
  const answers = new Set<string>();
  for (const [name, token] of Object.entries(attacks)) {
    const result = await outcome(() => app.authenticator.authenticate(`Bearer ${token}`));
    t.match(result, { status: 401, code: 'PLATFORM_INVALID_CREDENTIAL', challenge: WWW_AUTHENTICATE }, name);
    answers.add(JSON.stringify(result));
  }
  t.equal(answers.size, 1, 'the same message whatever check failed');
  t.equal(exp, claims.exp);
});

t.test(
  "a key lookup that fails (the database) is not the caller's fault: it is not answered as an invalid token",
  async (t) => {
    const unreachable = new Error('connect ECONNREFUSED');
    const keyRing = { verificationKey: async () => Promise.reject(unreachable) } as unknown as KeyRing;
    const authenticator = new Authenticator(
      createTokenVerifier(keyRing, tokenSettings(config)),
      new ExtensionPolicies(db, 0),
    );
    await t.rejects(authenticator.authenticate(`Bearer ${genuine}`), unreachable);
  },
);

t.test('an expired token: PLATFORM_TOKEN_EXPIRED, after one signature check however often it is sent', async (t) => {
  let verifications = 0;
  const verify = createTokenVerifier(app.keyRing, tokenSettings(config));
  const authenticator = new Authenticator((token) => {
    verifications++;
    return verify(token);
  }, new ExtensionPolicies(db, 0));
  const expired = `Bearer ${es256(header, { ...claims, iat: now - 1000, exp: now - 100 }, activePem)}`;
  for (let i = 0; i < 3; i++)
    t.match(await outcome(() => authenticator.authenticate(expired)), {
      status: 401,
      code: 'PLATFORM_TOKEN_EXPIRED',
      challenge: WWW_AUTHENTICATE,
    });
  t.match(
    await outcome(async () => authenticator.authenticateNow(expired)),
    { status: 401, code: 'PLATFORM_TOKEN_EXPIRED' },
    'refused synchronously too',
  );
  t.equal(verifications, 1, 'verified once');
  const forged = `Bearer ${es256(header, { ...claims, iat: now - 1000, exp: now - 100 }, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey)}`;
  t.match(
    await outcome(() => authenticator.authenticate(forged)),
    { status: 401, code: 'PLATFORM_INVALID_CREDENTIAL' },
    'a forged token that is also expired is not called expired',
  );
  t.match(
    await outcome(() => authenticator.authenticate(forged)),
    { code: 'PLATFORM_INVALID_CREDENTIAL' },
    'nor remembered as such',
  );
  t.equal(verifications, 3, 'a refusal other than expiry is not remembered');
  const shortLived = await new TokenSigner(app.keyRing, { ...tokenSettings(config), ttlSeconds: 2 }).sign({
    ...integration,
    phiMode: 'no_phi',
    scopes: [],
  });
  t.equal(await outcome(() => authenticator.authenticate(`Bearer ${shortLived.accessToken}`)), 'accepted');
  await new Promise((resolve) => setTimeout(resolve, 2100));
  t.match(
    await outcome(() => authenticator.authenticate(`Bearer ${shortLived.accessToken}`)),
    { code: 'PLATFORM_TOKEN_EXPIRED' },
    'a remembered token that expired',
  );
  t.equal(verifications, 4, 'is refused from memory');
});

t.test('revocation of one token by jti, and of all tokens of an integration', async (t) => {
  const mine = await createTestIntegration(db);
  const [first, second] = [await tokenFor(mine), await tokenFor(mine)];
  await revokeToken(db, mine.clientId, decodePart(first, 1).jti, config.tokenTtlSeconds);
  t.match(await outcome(() => app.authenticator.authenticate(`Bearer ${first}`)), {
    status: 401,
    code: 'PLATFORM_TOKEN_REVOKED',
    challenge: WWW_AUTHENTICATE,
  });
  t.equal(await outcome(() => app.authenticator.authenticate(`Bearer ${second}`)), 'accepted');
  await revokeIntegrationTokens(db, mine.clientId);
  t.match(await outcome(() => app.authenticator.authenticate(`Bearer ${second}`)), { code: 'PLATFORM_TOKEN_REVOKED' });
  // iat has whole seconds: a token counts as after the revocation from the next second on.
  await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 10));
  t.equal(
    await outcome(async () => app.authenticator.authenticate(`Bearer ${await tokenFor(mine)}`)),
    'accepted',
    'new tokens work',
  );
});

t.test('a disabled integration or agency: 403 PLATFORM_EXTENSION_DISABLED', async (t) => {
  const mine = await createTestIntegration(db);
  const token = await tokenFor(mine);
  await setIntegrationStatus(db, mine.clientId, 'disabled');
  t.match(await outcome(() => app.authenticator.authenticate(`Bearer ${token}`)), {
    status: 403,
    code: 'PLATFORM_EXTENSION_DISABLED',
  });
  await setIntegrationStatus(db, mine.clientId, 'active');
  t.equal(await outcome(() => app.authenticator.authenticate(`Bearer ${token}`)), 'accepted');
  await db.updateTable('agencies').set({ status: 'disabled' }).where('id', '=', mine.agencyId).execute();
  t.match(await outcome(() => app.authenticator.authenticate(`Bearer ${token}`)), {
    status: 403,
    code: 'PLATFORM_EXTENSION_DISABLED',
  });
});

// Long enough that a loaded machine still answers from the cache within it.
const AUTH_STATE_TTL_MS = 1000;

t.test(
  'warm caches: no query and no signature check per request; changes take effect within authStateTtlMs',
  async (t) => {
    let [queries, verifications] = [0, 0];
    const counting: KyselyPlugin = {
      transformQuery: (args) => {
        queries++;
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    const verify = createTokenVerifier(app.keyRing, tokenSettings(config));
    const countedVerify = (token: string) => {
      verifications++;
      return verify(token);
    };
    const authenticator = new Authenticator(
      countedVerify,
      new ExtensionPolicies(db.withPlugin(counting), AUTH_STATE_TTL_MS),
    );
    const mine = await createTestIntegration(db);
    const token = await tokenFor(mine);
    await authenticator.authenticate(`Bearer ${token}`);
    [queries, verifications] = [0, 0];
    for (let i = 0; i < 100; i++) await authenticator.authenticate(`Bearer ${token}`);
    t.same(
      { queries, verifications },
      { queries: 0, verifications: 0 },
      'a reused token with a warm cache does no I/O',
    );
    await setIntegrationStatus(db, mine.clientId, 'disabled');
    t.equal(await outcome(() => authenticator.authenticate(`Bearer ${token}`)), 'accepted', 'still cached');
    await new Promise((resolve) => setTimeout(resolve, AUTH_STATE_TTL_MS + 50));
    t.match(
      await outcome(() => authenticator.authenticate(`Bearer ${token}`)),
      { code: 'PLATFORM_EXTENSION_DISABLED' },
      'refused once the bound has passed',
    );
    t.equal(queries, 1, 'one policy read per extension per bound');
  },
);

t.test('remembers a bounded number of verified tokens: past it the longest-held is verified again', async (t) => {
  let verifications = 0;
  const verify = createTokenVerifier(app.keyRing, tokenSettings(config));
  const countedVerify = (token: string) => {
    verifications++;
    return verify(token);
  };
  const authenticator = new Authenticator(countedVerify, new ExtensionPolicies(db, AUTH_STATE_TTL_MS), 2);
  const [first, second, third] = await Promise.all([1, 2, 3].map(() => tokenFor(integration)));
  const authenticate = async (token: string) => {
    const before = verifications;
    await authenticator.authenticate(`Bearer ${token}`);
    return verifications - before;
  };
  t.same(
    [await authenticate(first), await authenticate(second), await authenticate(first)],
    [1, 1, 0],
    'two tokens are held',
  );
  t.equal(await authenticate(third), 1);
  t.same([await authenticate(second), await authenticate(third)], [0, 0], 'the two newest stay');
  t.equal(await authenticate(first), 1, 'the first was forgotten and is verified again');
});

t.test('authenticateNow answers only from warm caches, with the same refusals, within the same bound', async (t) => {
  const authenticator = new Authenticator(
    createTokenVerifier(app.keyRing, tokenSettings(config)),
    new ExtensionPolicies(db, AUTH_STATE_TTL_MS),
  );
  const mine = await createTestIntegration(db);
  const authorization = `Bearer ${await tokenFor(mine)}`;
  t.equal(authenticator.authenticateNow(authorization), undefined, 'cold: the token must be verified first');
  const warm = await authenticator.authenticate(authorization);
  t.same(authenticator.authenticateNow(authorization), warm, 'warm: the same principal and policy, without a promise');
  t.equal(
    authenticator.authenticateNow(authorization.replace('Bearer ', 'Bearer  ')),
    undefined,
    'another header with the same tail is not taken for it',
  );
  await setIntegrationStatus(db, mine.clientId, 'disabled');
  t.same(authenticator.authenticateNow(authorization), warm, 'within the bound the cached policy answers');
  await new Promise((resolve) => setTimeout(resolve, AUTH_STATE_TTL_MS + 50));
  t.equal(authenticator.authenticateNow(authorization), undefined, 'past the bound the policy must be read again');
  t.match(await outcome(() => authenticator.authenticate(authorization)), {
    status: 403,
    code: 'PLATFORM_EXTENSION_DISABLED',
  });
  t.match(
    await outcome(async () => authenticator.authenticateNow(authorization)),
    { status: 403, code: 'PLATFORM_EXTENSION_DISABLED' },
    'then refused synchronously',
  );
});

t.test('key rotation: old tokens verify until verify_until, new tokens carry the new kid', async (t) => {
  const mine = await createTestIntegration(db);
  const before = await tokenFor(mine);
  const oldKid = decodePart(before, 0).kid;
  const rotation = await rotateSigningKey(db, testKeyEncryption, config.tokenTtlSeconds);
  t.same(
    rotation.retired.map((r) => r.kid),
    [oldKid],
  );
  const margin = rotation.retired[0].verifyUntil.getTime() - Date.now();
  t.ok(
    margin > config.tokenTtlSeconds * 1000 && margin <= (config.tokenTtlSeconds + 61) * 1000,
    'verify_until: the token lifetime plus a margin',
  );
  // Another instance (or this one after its key-ring refresh) sees the rotation.
  const fresh = services();
  const after = await tokenFor(mine, fresh);
  t.equal(decodePart(after, 0).kid, rotation.kid);
  for (const [name, token] of Object.entries({ before, after })) {
    t.equal(await outcome(() => fresh.authenticator.authenticate(`Bearer ${token}`)), 'accepted', name);
  }
  t.equal(
    await outcome(() => app.authenticator.authenticate(`Bearer ${after}`)),
    'accepted',
    'an unknown kid reloads the key ring',
  );
  const jwks = await fresh.keyRing.jwks();
  t.same(jwks.keys.map((k) => k.kid).sort(), [oldKid, rotation.kid].sort());
  t.notOk(
    jwks.keys.some((k) => 'd' in k),
    'no private part',
  );
  await db
    .updateTable('signing_keys')
    .set({ verify_until: sql`now() - interval '1 second'` })
    .where('kid', '=', oldKid)
    .execute();
  const later = services();
  t.match(
    await outcome(() => later.authenticator.authenticate(`Bearer ${before}`)),
    { code: 'PLATFORM_INVALID_CREDENTIAL' },
    'past verify_until',
  );
  t.same(
    (await later.keyRing.jwks()).keys.map((k) => k.kid),
    [rotation.kid],
    'and gone from the JWKS',
  );
});
