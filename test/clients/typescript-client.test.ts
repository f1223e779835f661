import { createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import t from 'tap';
import {
  CLIENT_ASSERTION_TYPE,
  createExtensionClient,
  ExtensionApiError,
  unwrap,
  type Credentials,
  type ExtensionClientOptions,
  type KeyCredentials,
} from '../../clients/typescript/src/index.js';
import { clientKey, createTestKeyIntegration, type ClientKey } from '../helpers/client-keys.js';
import { testDatabase } from '../helpers/database.js';
import { until } from '../helpers/until.js';
import { createTestIntegration } from '../helpers/identity.js';
import { listeningApp } from '../mcp/mcp-helpers.js';

// The shipped client (clients/typescript) against the real server listening on loopback.
const { base } = await listeningApp(t);
const { db } = await testDatabase();
const integration = await createTestIntegration(db);
const agencyId = integration.agencyId;
const credentials = { clientId: integration.clientId, clientSecret: integration.clientSecret, phiMode: 'phi' as const };
// An integration of the same agency with two registered keys and no secret (private_key_jwt).
const rsaKey = clientKey('RS384');
const ecKey = clientKey('ES384');
const keyClientId = await createTestKeyIntegration(db, agencyId, [rsaKey, ecKey]);
const byKey = {
  clientId: keyClientId,
  privateKey: rsaKey.privateKey,
  kid: rsaKey.kid,
  phiMode: 'phi' as const,
};
const credentialKinds: Record<string, Credentials> = {
  'a secret': credentials,
  'an RSA KeyObject (RS384)': byKey,
  'an EC P-384 private JWK (ES384)': {
    ...byKey,
    privateKey: ecKey.privateKey.export({ format: 'jwk' }),
    kid: ecKey.kid,
    alg: 'ES384',
  },
};
const TOKEN_PATH = '/api/v1/oauth/token';

interface Sent {
  method: string;
  path: string;
  key: string | null;
  authorization: string | null;
  status?: number;
  retryAfter?: string | null;
  /** A token request's body. */
  body?: Record<string, string>;
}

/** A client whose requests are recorded; `drop` loses the answer of the requests it picks after the server handled them. */
function recordedClient(options: Partial<ExtensionClientOptions> = {}, drop: (sent: Sent) => boolean = () => false) {
  const sent: Sent[] = [];
  const client = createExtensionClient({
    baseUrl: base,
    credentials,
    ...options,
    async fetch(request) {
      const entry: Sent = {
        method: request.method,
        path: new URL(request.url).pathname,
        key: request.headers.get('idempotency-key'),
        authorization: request.headers.get('authorization'),
      };
      if (entry.path === TOKEN_PATH) entry.body = (await request.clone().json()) as Record<string, string>;
      sent.push(entry);
      const response = await fetch(request);
      Object.assign(entry, { status: response.status, retryAfter: response.headers.get('retry-after') });
      if (drop(entry)) {
        entry.status = undefined;
        throw new TypeError('fetch failed (the test dropped the answer)');
      }
      return response;
    },
  });
  return { client, sent, tokenRequests: () => sent.filter((s) => s.path === TOKEN_PATH).length };
}

const referral = (last: string) => ({
  service_line: 'home_health' as const,
  patient_name: `Client ${last}`,
  patient_zip_code: '02108',
});

// Charts to page through: each accepted referral of a new name opens one.
const setup = createExtensionClient({ baseUrl: base, credentials });
for (const last of ['Abbott', 'Baker', 'Chen', 'Diaz', 'Evans'])
  unwrap(await setup.POST('/api/v1/ext/referrals', { body: referral(last) }));

for (const [kind, byKind] of Object.entries(credentialKinds)) {
  t.test(
    `${kind}: one token is shared until shortly before expires_in, then renewed; concurrent callers share one fetch`,
    async (t) => {
      let now = Date.now();
      const { client, sent, tokenRequests } = recordedClient({
        credentials: byKind,
        now: () => now,
        renewBeforeSeconds: 60,
      });
      await Promise.all([client.GET('/api/v1/ext/health'), client.GET('/api/v1/ext/health')]);
      t.equal(tokenRequests(), 1, 'two concurrent first calls, one token request');
      const first = sent.at(-1)!.authorization;
      const { expires_in: expiresIn } = await client.tokens.token();
      now += (expiresIn - 61) * 1000;
      await client.GET('/api/v1/ext/health');
      t.equal(tokenRequests(), 1, 'still fresh a minute and a second before expiry');
      now += 2000;
      const { data } = await client.GET('/api/v1/ext/health');
      t.ok(data?.data, 'health answered');
      t.equal(tokenRequests(), 2, 'renewed inside the last minute');
      t.not(sent.at(-1)!.authorization, first, 'with the new token');
    },
  );

  t.test(`${kind}: a token the server calls expired is replaced and the call sent again`, async (t) => {
    // Two seconds: a token of one (its exp in whole seconds) may expire before its first use on a busy machine.
    const shortLived = await listeningApp(t, undefined, { tokenTtlSeconds: 2 });
    const frozen = Date.now();
    const { client, sent, tokenRequests } = recordedClient({
      baseUrl: shortLived.base,
      credentials: byKind,
      now: () => frozen,
    });
    await client.GET('/api/v1/ext/health');
    // Past the token's life on the server's clock, while this client's clock stands still (a skewed clock).
    const [, claims] = (await client.tokens.accessToken()).split('.');
    const { exp } = JSON.parse(Buffer.from(claims, 'base64url').toString('utf8')) as { exp: number };
    await until('the token has expired', async () => Date.now() > exp * 1000 + 100);
    const { response } = await client.GET('/api/v1/ext/health');
    t.equal(response.status, 200, 'answered');
    t.same(
      sent.filter((s) => s.path === '/api/v1/ext/health').map((s) => s.status),
      [200, 401, 200],
      'refused once as expired, then sent with a new token',
    );
    t.equal(tokenRequests(), 2);
  });
}

/** A compact JWS's header and claims, and whether the public key verifies its signature. */
function readJws(jws: string, key: ClientKey) {
  const [header, claims, signature] = jws.split('.');
  const json = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  const publicKey = createPublicKey({ key: key.publicJwk, format: 'jwk' });
  const verifier = key.alg === 'ES384' ? { key: publicKey, dsaEncoding: 'ieee-p1363' as const } : publicKey;
  const signed = verify('sha384', Buffer.from(`${header}.${claims}`), verifier, Buffer.from(signature, 'base64url'));
  return { header: json(header), claims: json(claims), signed };
}

t.test(
  'with a key, each attempt of a token request is an assertion signed anew for the URL it is posted to',
  async (t) => {
    let dropped = false;
    const { client, sent } = recordedClient(
      { credentials: credentialKinds['an EC P-384 private JWK (ES384)'], retry: { baseDelaySeconds: 0.01 } },
      (s) => s.path === TOKEN_PATH && !dropped && (dropped = true),
    );
    const { response } = await client.GET('/api/v1/ext/health');
    t.equal(response.status, 200, 'answered');
    const attempts = sent.filter((s) => s.path === TOKEN_PATH);
    t.same(
      attempts.map((s) => s.status),
      [undefined, 200],
      'the first answer lost after the server accepted it, then a token',
    );
    const jws = attempts.map((s) => readJws(s.body!.client_assertion, ecKey));
    t.not(jws[0].claims.jti, jws[1].claims.jti, 'a new jti for the retry: the service accepts each jti once');
    for (const [i, { header, claims, signed }] of jws.entries()) {
      t.match(attempts[i].body, { client_assertion_type: CLIENT_ASSERTION_TYPE, phi_mode: 'phi' }, 'beside phi_mode');
      t.notOk('client_secret' in attempts[i].body! || 'client_id' in attempts[i].body!, 'no secret, no client_id');
      t.match(header, { alg: 'ES384', kid: ecKey.kid, typ: 'JWT' });
      t.match(claims, { iss: keyClientId, sub: keyClientId, aud: `${base}${TOKEN_PATH}` });
      t.equal(claims.exp - claims.iat, 300, 'exp five minutes ahead');
      t.ok(Math.abs(claims.iat - Date.now() / 1000) < 30, 'by the wall clock');
      t.ok(signed, 'signed by the private key of the registered public one (ES384 as r || s)');
    }
  },
);

t.test('an unregistered key is refused like a wrong secret; an unusable key before anything is sent', async (t) => {
  const stranger = createExtensionClient({
    baseUrl: base,
    credentials: { ...byKey, privateKey: clientKey('RS384').privateKey },
  });
  await t.rejects(stranger.GET('/api/v1/ext/health'), {
    name: 'ExtensionApiError',
    status: 401,
    code: 'PLATFORM_INVALID_CREDENTIAL',
    retryable: false,
    apiError: { error: 'invalid_client' },
  });
  const refused = (privateKey: KeyCredentials['privateKey'], alg?: 'RS384' | 'ES384') => () =>
    createExtensionClient({ baseUrl: base, credentials: { ...byKey, privateKey, alg } });
  t.throws(
    refused(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey),
    /RSA \(RS384\) or EC P-384 \(ES384\)/,
  );
  t.throws(refused(createPublicKey(rsaKey.privateKey)), /must be a private key/);
  t.throws(refused(rsaKey.privateKey, 'ES384'), /signs with RS384, not ES384/);
});

t.test('pages follow meta.next_cursor to the end of a list', async (t) => {
  const { client } = recordedClient();
  const pages = [];
  for await (const page of client.pages('/api/v1/ext/patients', { params: { query: { limit: 2 } } })) pages.push(page);
  const ids = pages.flatMap((p) => p.data.map((patient) => patient.id));
  const stored = await db
    .selectFrom('patients')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('agency_id', '=', agencyId)
    .executeTakeFirstOrThrow();
  t.equal(pages.length, Math.ceil(ids.length / 2), `${pages.length} pages of 2`);
  t.ok(ids.length >= 5, `${ids.length} charts`);
  t.equal(ids.length, Number(stored.n), 'every chart of the agency');
  t.equal(new Set(ids).size, ids.length, 'none twice');
  t.equal(pages.at(-1)!.meta.next_cursor, null, 'the last page has no cursor');
  const statuses = new Set(pages.flatMap((p) => p.data.map((patient) => patient.status)));
  const status = [...statuses][0];
  const filtered = [];
  for await (const patient of client.items('/api/v1/ext/patients', { params: { query: { limit: 1, status } } }))
    filtered.push(patient);
  t.ok(filtered.length > 1, 'items yields each item of every page');
  t.ok(
    filtered.every((p) => p.status === status),
    'with the filters kept on every page',
  );
});

t.test('a command gets an idempotency key, reused when its answer is lost and it is sent again', async (t) => {
  let dropped = false;
  const { client, sent } = recordedClient(
    { retry: { baseDelaySeconds: 0.01 } },
    (s) => s.method === 'POST' && s.path === '/api/v1/ext/referrals' && !dropped && (dropped = true),
  );
  const result = await client.POST('/api/v1/ext/referrals', { body: referral('Lostanswer') });
  const posts = sent.filter((s) => s.path === '/api/v1/ext/referrals');
  t.equal(posts.length, 2, 'sent again after the lost answer');
  t.match(posts[0].key, /^[A-Za-z0-9._:-]{8,128}$/, 'a key the contract accepts');
  t.equal(posts[1].key, posts[0].key, 'the same key on the retry');
  t.equal(result.response.headers.get('idempotent-replayed'), 'true', 'the server replayed the first answer');
  const recorded = await db
    .selectFrom('referrals')
    .select('id')
    .where('agency_id', '=', agencyId)
    .where('id', '=', result.data!.data.referral_id)
    .execute();
  t.equal(recorded.length, 1, 'one referral recorded');
  await client.POST('/api/v1/ext/referrals', { body: referral('Secondcall') });
  t.not(sent.at(-1)!.key, posts[0].key, 'the next command gets its own key');
  await client.GET('/api/v1/ext/patients', { params: { query: { limit: 1 } } });
  t.equal(sent.at(-1)!.key, null, 'a read gets none');
});

t.test('refusals are typed errors in either shape, not retried when retryable is false', async (t) => {
  const { client, sent } = recordedClient();
  const invalid = { service_line: 'home_health', patient_zip_code: '02108' } as never;
  const error = await client
    .POST('/api/v1/ext/referrals', { body: invalid })
    .then(unwrap, () => t.fail('no answer'))
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  t.equal(sent.filter((s) => s.path === '/api/v1/ext/referrals').length, 1, 'sent once');
  t.type(error, ExtensionApiError, 'unwrap throws the refusal');
  t.match(error, {
    status: 400,
    code: 'PLATFORM_INVALID_INPUT',
    category: 'validation',
    retryable: false,
    terminal: true,
  });
  t.ok((error as ExtensionApiError).platformError, 'the body in the ExternalPlatformError shape');

  const wrongSecret = createExtensionClient({
    baseUrl: base,
    credentials: { ...credentials, clientSecret: 'sec_not-the-secret' },
  });
  await t.rejects(wrongSecret.GET('/api/v1/ext/health'), {
    name: 'ExtensionApiError',
    status: 401,
    code: 'PLATFORM_INVALID_CREDENTIAL',
    retryable: false,
    apiError: { error: 'invalid_client' },
  });
});

t.test('a retryable refusal is sent again after its Retry-After, up to maxAttempts', async (t) => {
  const limited = await createTestIntegration(db, { agencyId, rateLimitPerMinute: 2 });
  const waits: number[] = [];
  const { client, sent } = recordedClient({
    credentials: { clientId: limited.clientId, clientSecret: limited.clientSecret, phiMode: 'no_phi' },
    retry: { maxAttempts: 3, maxDelaySeconds: 120, sleep: async (ms) => void waits.push(ms) },
  });
  await client.GET('/api/v1/ext/health');
  await client.GET('/api/v1/ext/health');
  const { error, response } = await client.GET('/api/v1/ext/health');
  const attempts = sent.filter((s) => s.path === '/api/v1/ext/health').slice(2);
  t.equal(response.status, 429, 'the third call of the minute is refused');
  t.equal(attempts.length, 3, 'three attempts');
  t.same(
    waits,
    attempts.slice(0, 2).map((a) => Number(a.retryAfter) * 1000),
    'each wait is the Retry-After of the refusal before it',
  );
  t.ok(
    waits.every((w) => w > 0),
    'the refusals named a delay',
  );
  t.match(error, { error: { code: 'PLATFORM_RATE_LIMITED', retryable: true } });

  const impatient = recordedClient({
    credentials: { clientId: limited.clientId, clientSecret: limited.clientSecret, phiMode: 'no_phi' },
    retry: { maxDelaySeconds: 0.5 },
  });
  const refused = await impatient.client.GET('/api/v1/ext/health');
  t.equal(
    impatient.sent.filter((s) => s.path === '/api/v1/ext/health').length,
    1,
    'a Retry-After past maxDelaySeconds is not waited for',
  );
  t.equal(refused.response.status, 429);
});
