import { createPublicKey } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import t, { type Test } from 'tap';
import { setIntegrationKeys, setIntegrationStatus } from '../../src/admin/integration.js';
import { loadConfig } from '../../src/config.js';
import { fetchCheckedDocument } from '../../src/events/receiver-request.js';
import { purgeExpiredAssertionIds } from '../../src/identity/client-assertions.js';
import { checkKeySource, KeySetRefused, publicKeySet, type KeySource } from '../../src/identity/client-keys.js';
import { readProjectFile } from '../../src/project-files.js';
import { buildTestApp, type Response } from '../helpers/app.js';
import { testDatabase, testDatabaseUrl } from '../helpers/database.js';
import { createTestIntegration, tokenRequestBody, type TestIntegration } from '../helpers/identity.js';
import {
  assertionRequestBody,
  clientAssertion,
  clientKey,
  hmacWith,
  jwksOf,
  type AssertionOptions,
  type ClientKey,
} from '../helpers/client-keys.js';
import { startServerProcess } from '../helpers/server-process.js';

const api = await buildTestApp();
const { db } = await testDatabase();
const TOKEN_URL = '/api/v1/oauth/token';
/** The aud every assertion names: the token endpoint's URL under the issuer the app runs as. */
const AUDIENCE = `${loadConfig({}).tokenIssuer}${TOKEN_URL}`;
const rsaKey = clientKey('RS384');
const ecKey = clientKey('ES384');

/** Each request its own remote address, so the per-address failure limit never answers for the case under test. */
let nextAddress = 1;
const freshAddress = () => `203.0.113.${nextAddress++}`;

function requestToken(payload: Record<string, string>) {
  return api.request({ method: 'POST', url: TOKEN_URL, payload, remoteAddress: freshAddress() });
}

function formRequest(fields: Record<string, string>) {
  return api.request({
    method: 'POST',
    url: TOKEN_URL,
    payload: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    remoteAddress: freshAddress(),
  });
}

const register = async (integration: TestIntegration, source: KeySource) =>
  setIntegrationKeys(db, integration.clientId, await checkKeySource(fetchCheckedDocument, source));

/** An integration (with a secret too) that signs its assertions with `keys`. */
async function keyIntegration(...keys: ClientKey[]): Promise<TestIntegration> {
  const integration = await createTestIntegration(db);
  await register(integration, { jwks: jwksOf(...keys) });
  return integration;
}

const assertionFor = (key: ClientKey, integration: TestIntegration, options: Partial<AssertionOptions> = {}) =>
  clientAssertion(key, { clientId: integration.clientId, audience: AUDIENCE, ...options });

function assertIssued(t: Test, res: Response, integration: TestIntegration, phiMode: string) {
  t.equal(res.statusCode, 200, res.body);
  t.match(res.json(), {
    token_type: 'Bearer',
    agency_id: integration.agencyId,
    extension_id: integration.extensionId,
    phi_mode: phiMode,
    access_token: /^ey/,
  });
}

/** The refusal as a stranger sees it: everything but the request id, and the challenge. */
function refusal(t: Test, res: Response, name: string) {
  t.equal(res.statusCode, 401, `${name}: ${res.body}`);
  const { request_id, ...body } = res.json();
  t.ok(request_id, name);
  return { body, challenge: res.headers['www-authenticate'] };
}

t.test(
  'a valid assertion gets a token (RS384 and ES384), in JSON and form bodies, beside phi_mode and agency_id',
  async (t) => {
    const integration = await keyIntegration(rsaKey, ecKey);
    for (const key of [rsaKey, ecKey]) {
      const json = await requestToken(
        assertionRequestBody(assertionFor(key, integration), { agency_id: integration.agencyId, phi_mode: 'phi' }),
      );
      assertIssued(t, json, integration, 'phi');
      const form = await formRequest(
        assertionRequestBody(assertionFor(key, integration), { client_id: integration.clientId }),
      );
      assertIssued(t, form, integration, 'no_phi');
    }
    const token = (await requestToken(assertionRequestBody(assertionFor(ecKey, integration)))).json().access_token;
    const call = await api.request({
      method: 'GET',
      url: '/api/v1/ext/health',
      headers: { authorization: `Bearer ${token}` },
    });
    t.equal(call.statusCode, 200, 'the token works like one got with the secret');
    assertIssued(t, await requestToken(tokenRequestBody(integration)), integration, 'no_phi');
  },
);

t.test(
  "a fault in the assertion's own text has its code, and a stranger gets the same answer as the client",
  async (t) => {
    const integration = await keyIntegration(rsaKey);
    const now = Math.floor(Date.now() / 1000);
    const publicPem = createPublicKey({ key: rsaKey.publicJwk, format: 'jwk' }).export({ format: 'pem', type: 'spki' });
    const cases: Record<string, [code: string, make: (clientId: string) => string]> = {
      'wrong aud': [
        'PLATFORM_CLIENT_ASSERTION_AUDIENCE',
        (clientId) => clientAssertion(rsaKey, { clientId, audience: 'https://other.example/token' }),
      ],
      'exp more than five minutes ahead': [
        'PLATFORM_CLIENT_ASSERTION_LIFETIME',
        (clientId) => clientAssertion(rsaKey, { clientId, audience: AUDIENCE, claims: { exp: now + 330 } }),
      ],
      'exp passed': [
        'PLATFORM_CLIENT_ASSERTION_LIFETIME',
        (clientId) => clientAssertion(rsaKey, { clientId, audience: AUDIENCE, claims: { exp: now - 60 } }),
      ],
      'alg none': [
        'PLATFORM_CLIENT_ASSERTION_ALGORITHM',
        (clientId) =>
          clientAssertion(rsaKey, {
            clientId,
            audience: AUDIENCE,
            header: { alg: 'none' },
            signature: () => Buffer.alloc(0),
          }),
      ],
      'HS256 keyed with the public key': [
        'PLATFORM_CLIENT_ASSERTION_ALGORITHM',
        (clientId) =>
          clientAssertion(rsaKey, {
            clientId,
            audience: AUDIENCE,
            header: { alg: 'HS256' },
            signature: hmacWith(publicPem),
          }),
      ],
      'no kid': [
        'PLATFORM_CLIENT_ASSERTION_MALFORMED',
        (clientId) => clientAssertion(rsaKey, { clientId, audience: AUDIENCE, header: { kid: undefined } }),
      ],
      'sub not the client id': [
        'PLATFORM_CLIENT_ASSERTION_MALFORMED',
        (clientId) => clientAssertion(rsaKey, { clientId, audience: AUDIENCE, claims: { sub: 'someone-else' } }),
      ],
      'not a JWT': ['PLATFORM_CLIENT_ASSERTION_MALFORMED', () => 'not-a-jwt'],
    };
    for (const [name, [code, make]] of Object.entries(cases)) {
      const client = refusal(t, await requestToken(assertionRequestBody(make(integration.clientId))), name);
      const stranger = refusal(t, await requestToken(assertionRequestBody(make('cli_doesnotexist'))), name);
      t.same(stranger, client, `${name}: nothing tells a stranger whether the client exists`);
      t.match(client, {
        body: { error: 'invalid_client', code, user_message: 'Client authentication failed.' },
        challenge: /^Basic realm=/,
      });
    }
  },
);

t.test(
  'the contract says what each assertion code tells, and that it tells nothing of the client or its keys',
  async (t) => {
    const contract: { 'x-svc-error-codes': { code: string; description: string }[] } = JSON.parse(
      readProjectFile('openapi.json'),
    );
    const described = Object.fromEntries(contract['x-svc-error-codes'].map((c) => [c.code, c.description]));
    t.match(described, {
      PLATFORM_CLIENT_ASSERTION_MALFORMED: /kid.*jti.*iss and sub/,
      PLATFORM_CLIENT_ASSERTION_ALGORITHM: /RS384 or ES384.*none and HMAC/,
      PLATFORM_CLIENT_ASSERTION_AUDIENCE: /aud.*details\.expected_aud/,
      PLATFORM_CLIENT_ASSERTION_LIFETIME: /exp.*300 seconds/,
      PLATFORM_INVALID_CREDENTIAL: /signed by no key of the client or with a jti already used/,
    });
    for (const code of ['MALFORMED', 'ALGORITHM', 'AUDIENCE', 'LIFETIME'])
      t.match(described[`PLATFORM_CLIENT_ASSERTION_${code}`], /Says nothing about the client or its keys/);
    const refused = async (options: Partial<AssertionOptions>, fields: Record<string, string> = {}) =>
      (
        await requestToken(
          assertionRequestBody(clientAssertion(rsaKey, { clientId: 'cli_x', audience: AUDIENCE, ...options }), fields),
        )
      ).json();
    t.match(await refused({ audience: 'x' }), {
      code: 'PLATFORM_CLIENT_ASSERTION_AUDIENCE',
      details: { expected_aud: AUDIENCE },
      user_next_step: /aud/,
    });
    t.match(await refused({ header: { alg: 'RS256' } }), {
      code: 'PLATFORM_CLIENT_ASSERTION_ALGORITHM',
      details: { allowed_algorithms: ['RS384', 'ES384'] },
    });
    t.match(await refused({ claims: { exp: Math.floor(Date.now() / 1000) + 3600 } }), {
      code: 'PLATFORM_CLIENT_ASSERTION_LIFETIME',
      details: { max_lifetime_seconds: 300 },
    });
    t.match(await refused({}, { client_id: 'cli_y' }), {
      code: 'PLATFORM_CLIENT_ASSERTION_MALFORMED',
      user_next_step: /client_id sent beside it/,
    });
    t.match(await refused({ claims: { jti: undefined } }), {
      code: 'PLATFORM_CLIENT_ASSERTION_MALFORMED',
      user_next_step: /jti/,
    });
  },
);

t.test('what depends on the stored keys and ids is refused exactly like a bad secret', async (t) => {
  const integration = await keyIntegration(rsaKey, ecKey);
  const other = clientKey('ES384');
  const otherIntegration = await keyIntegration(other);
  const sameKidElsewhere = clientKey('RS384', rsaKey.kid);
  await keyIntegration(sameKidElsewhere);
  const disabled = await keyIntegration(ecKey);
  await setIntegrationStatus(db, disabled.clientId, 'disabled');
  const replayed = assertionFor(ecKey, integration);
  assertIssued(t, await requestToken(assertionRequestBody(replayed)), integration, 'no_phi');
  const cases: Record<string, () => Promise<Response>> = {
    'a bad secret': () => requestToken({ ...tokenRequestBody(integration), client_secret: 'sk_wrong' }),
    'a replayed jti': () => requestToken(assertionRequestBody(replayed)),
    'an unknown kid': () =>
      requestToken(assertionRequestBody(assertionFor(ecKey, integration, { header: { kid: 'no-such-kid' } }))),
    'a key of another integration': () => requestToken(assertionRequestBody(assertionFor(other, integration))),
    "another integration's key under a kid the client has": () =>
      requestToken(assertionRequestBody(assertionFor(sameKidElsewhere, integration))),
    "the client's key, as another integration": () =>
      requestToken(assertionRequestBody(assertionFor(ecKey, otherIntegration))),
    'an unknown client': () =>
      requestToken(assertionRequestBody(clientAssertion(ecKey, { clientId: 'cli_doesnotexist', audience: AUDIENCE }))),
    'a client_id beside it naming the same client, another agency': () =>
      requestToken(
        assertionRequestBody(assertionFor(ecKey, integration), {
          client_id: integration.clientId,
          agency_id: otherIntegration.agencyId,
        }),
      ),
    'a disabled integration': () => requestToken(assertionRequestBody(assertionFor(ecKey, disabled))),
  };
  const answers = new Set<string>();
  for (const [name, send] of Object.entries(cases)) answers.add(JSON.stringify(refusal(t, await send(), name)));
  t.equal(answers.size, 1, 'nothing tells the cases apart');
  t.match(JSON.parse([...answers][0]), {
    body: { error: 'invalid_client', code: 'PLATFORM_INVALID_CREDENTIAL' },
    challenge: /^Basic realm=/,
  });
});

t.test('a refused assertion does not spend its jti: the same jti is accepted once the request is right', async (t) => {
  const integration = await keyIntegration(rsaKey);
  const assertion = assertionFor(rsaKey, integration);
  const otherAgency = await createTestIntegration(db);
  refusal(t, await requestToken(assertionRequestBody(assertion, { agency_id: otherAgency.agencyId })), 'agency');
  assertIssued(t, await requestToken(assertionRequestBody(assertion)), integration, 'no_phi');
});

t.test(
  'a replayed jti is refused by a second server process on the same database',
  {
    skip: testDatabaseUrl() ? false : 'needs PostgreSQL: PGlite is one in-process database no second process can share',
    timeout: 120_000,
  },
  async (t) => {
    const second = await startServerProcess(testDatabaseUrl()!, { issuer: loadConfig({}).tokenIssuer });
    t.teardown(() => void second.child.kill());
    const integration = await keyIntegration(ecKey);
    const assertion = assertionFor(ecKey, integration);
    const onSecond = (payload: Record<string, string>) =>
      fetch(`${second.url}${TOKEN_URL}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(payload),
      });
    assertIssued(t, await requestToken(assertionRequestBody(assertion)), integration, 'no_phi');
    const replay = await onSecond(assertionRequestBody(assertion));
    t.equal(replay.status, 401);
    t.match(await replay.json(), { error: 'invalid_client', code: 'PLATFORM_INVALID_CREDENTIAL' });
    const fresh = await onSecond(assertionRequestBody(assertionFor(ecKey, integration)));
    t.equal(fresh.status, 200, 'the second process accepts a new jti: only the replay was refused');
  },
);

/** A real JWKS URL on loopback (the development allowance), answering with `jwks` and counting its requests. */
async function jwksServer(t: Test, cacheControl = 'max-age=3600') {
  const served = { jwks: {} as unknown, requests: 0 };
  const server = createServer((_request, reply) => {
    served.requests++;
    reply.writeHead(200, { 'content-type': 'application/json', 'cache-control': cacheControl });
    reply.end(JSON.stringify(served.jwks));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  return { served, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json` };
}

t.test(
  'a rotated key at the JWKS URL is picked up by one fetch on an unknown kid, at most once a minute',
  async (t) => {
    const { served, url } = await jwksServer(t);
    const first = clientKey('RS384');
    const next = clientKey('ES384');
    served.jwks = jwksOf(first);
    const integration = await createTestIntegration(db);
    await register(integration, { jwksUrl: url, allowHttpLoopback: true });
    t.equal(served.requests, 1, 'fetched at registration');
    assertIssued(t, await requestToken(assertionRequestBody(assertionFor(first, integration))), integration, 'no_phi');
    t.equal(served.requests, 1, 'a known kid within max-age is served from the cache');

    served.jwks = jwksOf(next);
    refusal(t, await requestToken(assertionRequestBody(assertionFor(next, integration))), 'within the minute');
    t.equal(served.requests, 1, 'no fetch within a minute of the last one');

    // As if the registration's fetch were a minute old.
    await db
      .updateTable('client_key_sets')
      .set({ fetched_at: sql`now() - interval '61 seconds'` })
      .where('client_id', '=', integration.clientId)
      .execute();
    assertIssued(t, await requestToken(assertionRequestBody(assertionFor(next, integration))), integration, 'no_phi');
    t.equal(served.requests, 2, 'fetched once for the unknown kid');
    refusal(t, await requestToken(assertionRequestBody(assertionFor(first, integration))), 'the rotated-out key');
    refusal(t, await requestToken(assertionRequestBody(assertionFor(first, integration))), 'the rotated-out key again');
    t.equal(served.requests, 2, 'unknown kids right after a fetch ask nothing');
  },
);

t.test("a JWKS URL is fetched with the webhook receivers' address checks at registration", async (t) => {
  const integration = await createTestIntegration(db);
  const refused = async (source: KeySource, fetchDocument = fetchCheckedDocument) => {
    try {
      await checkKeySource(fetchDocument, source);
      return 'accepted';
    } catch (err) {
      if (!(err instanceof KeySetRefused)) throw err;
      return err.message;
    }
  };
  const privateAnswer = (url: string, allow: boolean) =>
    fetchCheckedDocument(url, allow, async () => [{ address: '10.1.2.3', family: 4 }]);
  t.match(
    await refused({ jwksUrl: 'https://keys.partner.example/jwks.json', allowHttpLoopback: false }, privateAnswer),
    /not fetched: .*10\.1\.2\.3.*Private-Use/,
    'a name that resolves to a private address',
  );
  t.match(await refused({ jwksUrl: 'https://192.168.4.20/jwks.json', allowHttpLoopback: false }), /Private-Use/);
  t.match(await refused({ jwksUrl: 'https://[fd00::1]/jwks.json', allowHttpLoopback: false }), /Unique-Local/);
  const { served, url } = await jwksServer(t);
  served.jwks = jwksOf(rsaKey);
  t.match(await refused({ jwksUrl: url, allowHttpLoopback: false }), /not fetched: .*https/, 'plain http');
  t.equal(served.requests, 0, 'nothing was asked of a refused address');
  const stored = await db
    .selectFrom('client_key_sets')
    .where('client_id', '=', integration.clientId)
    .selectAll()
    .execute();
  t.same(stored, [], 'nothing registered');
});

t.test('only public keys are accepted: a private key is refused, naming its member', async (t) => {
  const refusedSet = (document: unknown) => {
    try {
      publicKeySet(document);
      return 'accepted';
    } catch (err) {
      if (!(err instanceof KeySetRefused)) throw err;
      return err.message;
    }
  };
  const privateRsa = { ...rsaKey.privateKey.export({ format: 'jwk' }), kid: 'a' };
  const privateEc = { ...ecKey.privateKey.export({ format: 'jwk' }), kid: 'b' };
  t.equal(refusedSet({ keys: [privateRsa] }), 'keys[0].d: a private key member; register the public key only');
  t.equal(
    refusedSet({ keys: [rsaKey.publicJwk, privateEc] }),
    'keys[1].d: a private key member; register the public key only',
  );
  t.match(refusedSet({ keys: [{ kty: 'oct', k: 'c2VjcmV0', kid: 'c' }] }), /^keys\[0\]\.k: /);
  t.match(refusedSet({ keys: [{ ...clientKey('ES384').publicJwk, kid: undefined }] }), /^keys\[0\]\.kid: /);
  t.equal(refusedSet(jwksOf(rsaKey, ecKey)), 'accepted');
});

t.test(
  'discovery: SMART configuration and the authorization-server metadata name private_key_jwt and its algorithms',
  async (t) => {
    const smart = await api.request({ method: 'GET', url: '/.well-known/smart-configuration' });
    t.equal(smart.statusCode, 200);
    t.match(smart.json(), {
      token_endpoint: AUDIENCE,
      grant_types_supported: ['client_credentials'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'],
      token_endpoint_auth_signing_alg_values_supported: ['RS384', 'ES384'],
      capabilities: ['client-confidential-asymmetric', 'client-confidential-symmetric'],
    });
    const metadata = await api.request({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
    t.match(metadata.json(), {
      token_endpoint: AUDIENCE,
      token_endpoint_auth_signing_alg_values_supported: ['RS384', 'ES384'],
    });
    t.ok(metadata.json().token_endpoint_auth_methods_supported.includes('private_key_jwt'));
  },
);

t.test('housekeeping drops the ids of expired assertions, and only those', async (t) => {
  const integration = await keyIntegration(rsaKey);
  const spent = [assertionFor(rsaKey, integration), assertionFor(rsaKey, integration)];
  for (const assertion of spent)
    assertIssued(t, await requestToken(assertionRequestBody(assertion)), integration, 'no_phi');
  const ids = () =>
    db.selectFrom('client_assertion_ids').select('jti').where('client_id', '=', integration.clientId).execute();
  const [expired, live] = await ids();
  await db
    .updateTable('client_assertion_ids')
    .set({ expires_at: sql`now() - interval '1 second'` })
    .where('jti', '=', expired.jti)
    .execute();
  t.ok((await purgeExpiredAssertionIds(db)) >= 1);
  t.same(await ids(), [live], 'the unexpired id stays, so its assertion is still refused a second time');
});
