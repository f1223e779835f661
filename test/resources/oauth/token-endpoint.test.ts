import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import t, { type Test } from 'tap';
import { rotateClientSecret, setIntegrationStatus } from '../../../src/admin/integration.js';
import { CONTRACT_SCOPES } from '../../../src/identity/grants.js';
import { TOKEN_FAILURE_LIMITS } from '../../../src/identity/token-failures.js';
import { loadConfig } from '../../../src/config.js';
import { buildTestApp, type Response, type TestApi } from '../../helpers/app.js';
import { testDatabase } from '../../helpers/database.js';
import { createTestIntegration, tokenRequestBody, type TestIntegration } from '../../helpers/identity.js';

const api = await buildTestApp();
const { db } = await testDatabase();
const TOKEN_URL = '/api/v1/oauth/token';

/** Each test its own remote address, so the failure limit of one does not spill into another. */
let nextAddress = 1;
const freshAddress = () => `198.51.100.${nextAddress++}`;

function requestToken(payload: object, options: { headers?: Record<string, string>; remoteAddress?: string } = {}) {
  return api.request({
    method: 'POST',
    url: TOKEN_URL,
    payload,
    headers: options.headers,
    remoteAddress: options.remoteAddress ?? freshAddress(),
  });
}

function formRequest(fields: Record<string, string>, headers: Record<string, string> = {}) {
  return api.request({
    method: 'POST',
    url: TOKEN_URL,
    payload: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    remoteAddress: freshAddress(),
  });
}

/** RFC 6749 2.3.1: each part form-url-encoded, then base64. */
function basic(clientId: string, secret: string): string {
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(secret)}`).toString('base64')}`;
}

function assertTokenResponse(t: Test, res: Response, integration: TestIntegration, phiMode = 'no_phi') {
  t.equal(res.statusCode, 200, res.body);
  const body = res.json();
  t.match(body, {
    token_type: 'Bearer',
    expires_in: 900,
    agency_id: integration.agencyId,
    extension_id: integration.extensionId,
    phi_mode: phiMode,
  });
  const { data, ...topLevel } = body;
  t.same(data, topLevel, 'the same object under data');
  t.notOk('refresh_token' in body || 'refresh_token' in body.data, 'never a refresh token');
  t.equal(res.headers['cache-control'], 'no-store');
  t.equal(res.headers.pragma, 'no-cache');
  return body;
}

t.test('JSON body: a token with every granted scope', async (t) => {
  const integration = await createTestIntegration(db);
  const body = assertTokenResponse(t, await requestToken(tokenRequestBody(integration)), integration);
  t.equal(body.scope, CONTRACT_SCOPES.join(' '));
  t.equal(body.access_token.split('.').length, 3);
});

t.test('RFC 6749 form encoding with the credentials in the body (client_secret_post)', async (t) => {
  const integration = await createTestIntegration(db);
  assertTokenResponse(t, await formRequest(tokenRequestBody(integration, 'phi')), integration, 'phi');
});

t.test('RFC 6749 form encoding with HTTP Basic (client_secret_basic)', async (t) => {
  const integration = await createTestIntegration(db);
  const res = await formRequest(
    { grant_type: 'client_credentials', agency_id: integration.agencyId, phi_mode: 'no_phi' },
    { authorization: basic(integration.clientId, integration.clientSecret) },
  );
  assertTokenResponse(t, res, integration);
});

t.test('credentials by Basic and in the body at once are refused (RFC 6749 2.3)', async (t) => {
  const integration = await createTestIntegration(db);
  const res = await requestToken(tokenRequestBody(integration), {
    headers: { authorization: basic(integration.clientId, integration.clientSecret) },
  });
  t.equal(res.statusCode, 400);
  t.match(res.json(), { error: 'invalid_request', code: 'PLATFORM_INVALID_REQUEST' });
});

t.test('invalid_client is one and the same answer for every credential problem (entitlement included)', async (t) => {
  const integration = await createTestIntegration(db);
  const other = await createTestIntegration(db);
  const disabled = await createTestIntegration(db);
  await setIntegrationStatus(db, disabled.clientId, 'disabled');
  const disabledAgency = await createTestIntegration(db);
  await db.updateTable('agencies').set({ status: 'disabled' }).where('id', '=', disabledAgency.agencyId).execute();
  const unentitled = await createTestIntegration(db, { capabilities: ['platform.read'] });
  const good = tokenRequestBody(integration);
  const cases: Record<string, () => Promise<Response>> = {
    'unknown client': () => requestToken({ ...good, client_id: 'cli_doesnotexist' }),
    'bad secret': () => requestToken({ ...good, client_secret: `${integration.clientSecret}x` }),
    "another client's secret": () => requestToken({ ...good, client_secret: other.clientSecret }),
    'unknown agency': () => requestToken({ ...good, agency_id: 'no-such-agency' }),
    'another agency': () => requestToken({ ...good, agency_id: other.agencyId }),
    'disabled integration': () => requestToken(tokenRequestBody(disabled)),
    'disabled agency': () => requestToken(tokenRequestBody(disabledAgency)),
    'no oauth.token entitlement': () => requestToken(tokenRequestBody(unentitled)),
    'no credentials': () =>
      requestToken({ grant_type: 'client_credentials', agency_id: integration.agencyId, phi_mode: 'no_phi' }),
    'malformed Basic': () =>
      requestToken(
        { grant_type: 'client_credentials', agency_id: integration.agencyId, phi_mode: 'no_phi' },
        { headers: { authorization: 'Basic %%%' } },
      ),
  };
  const answers = new Set<string>();
  for (const [name, send] of Object.entries(cases)) {
    const res = await send();
    t.equal(res.statusCode, 401, name);
    const { request_id, ...body } = res.json();
    t.ok(request_id, name);
    answers.add(JSON.stringify({ body, challenge: res.headers['www-authenticate'] }));
  }
  t.equal(answers.size, 1, 'nothing tells the cases apart');
  t.match(JSON.parse([...answers][0]), {
    body: { error: 'invalid_client', code: 'PLATFORM_INVALID_CREDENTIAL' },
    challenge: /^Basic realm=/,
  });
  assertTokenResponse(t, await requestToken(good), integration);
});

t.test(
  'phi_mode must be sent (PLATFORM_PHI_MODE_REQUIRED) and be permitted (PLATFORM_PHI_MODE_DENIED), in the RFC 6749 error shape',
  async (t) => {
    const integration = await createTestIntegration(db, { phiModes: ['no_phi'] });
    const { phi_mode, ...withoutPhiMode } = tokenRequestBody(integration);
    const missing = await requestToken(withoutPhiMode);
    t.equal(missing.statusCode, 400);
    t.match(missing.json(), {
      error: 'invalid_request',
      code: 'PLATFORM_PHI_MODE_REQUIRED',
      issues: [{ location: 'body', path: '/phi_mode', keyword: 'required' }],
    });
    const denied = await requestToken(tokenRequestBody(integration, 'phi'));
    t.equal(denied.statusCode, 403);
    t.match(denied.json(), {
      error: 'invalid_scope',
      code: 'PLATFORM_PHI_MODE_DENIED',
      details: { phi_mode: 'phi' },
      user_next_step: /no_phi/,
    });
    const unknown = await requestToken({ ...tokenRequestBody(integration), phi_mode: 'full' });
    t.equal(unknown.statusCode, 400);
    t.match(unknown.json(), {
      error: 'invalid_request',
      code: 'PLATFORM_INVALID_REQUEST',
      issues: [{ path: '/phi_mode' }],
    });
    t.equal(phi_mode, 'no_phi');
  },
);

t.test(
  'every refusal of the token endpoint is an ApiError: error is the RFC 6749 error, code the platform code',
  async (t) => {
    const integration = await createTestIntegration(db, { phiModes: ['no_phi'] });
    const good = tokenRequestBody(integration);
    const { phi_mode, ...noPhiMode } = good;
    const cases: Array<[string, () => Promise<Response>, number, string, string]> = [
      [
        'no grant_type',
        () => requestToken({ ...good, grant_type: undefined }),
        400,
        'invalid_request',
        'PLATFORM_INVALID_REQUEST',
      ],
      [
        'unknown property',
        () => requestToken({ ...good, tenant: 'x' }),
        400,
        'invalid_request',
        'PLATFORM_INVALID_REQUEST',
      ],
      [
        'another grant',
        () => requestToken({ ...good, grant_type: 'password' }),
        400,
        'unsupported_grant_type',
        'PLATFORM_INVALID_REQUEST',
      ],
      [
        'scope not granted',
        () => requestToken({ ...good, scope: 'external:everything' }),
        400,
        'invalid_scope',
        'PLATFORM_INVALID_REQUEST',
      ],
      ['phi_mode missing', () => requestToken(noPhiMode), 400, 'invalid_request', 'PLATFORM_PHI_MODE_REQUIRED'],
      [
        'phi_mode denied',
        () => requestToken({ ...good, phi_mode: 'phi' }),
        403,
        'invalid_scope',
        'PLATFORM_PHI_MODE_DENIED',
      ],
      [
        'bad secret',
        () => requestToken({ ...good, client_secret: 'nope' }),
        401,
        'invalid_client',
        'PLATFORM_INVALID_CREDENTIAL',
      ],
      [
        'not JSON',
        () =>
          api.request({
            method: 'POST',
            url: TOKEN_URL,
            payload: '{',
            headers: { 'content-type': 'application/json' },
            remoteAddress: freshAddress(),
          }),
        400,
        'invalid_request',
        'PLATFORM_INVALID_REQUEST',
      ],
      [
        'text/plain',
        () =>
          api.request({
            method: 'POST',
            url: TOKEN_URL,
            payload: 'grant_type=client_credentials',
            headers: { 'content-type': 'text/plain' },
            remoteAddress: freshAddress(),
          }),
        415,
        'unsupported_media_type',
        'PLATFORM_INVALID_REQUEST',
      ],
    ];
    for (const [name, send, status, error, code] of cases) {
      const res = await send();
      t.equal(res.statusCode, status, name);
      t.match(res.json(), { error, code }, name);
      t.type(res.json().error, 'string', `${name}: the ApiError shape`);
    }
    t.equal(phi_mode, 'no_phi');
  },
);

t.test(
  "agency_id may be left out: the token is for the integration's own agency (what stock OAuth clients can send)",
  async (t) => {
    const integration = await createTestIntegration(db);
    const { agency_id, ...withoutAgency } = tokenRequestBody(integration);
    assertTokenResponse(t, await requestToken(withoutAgency), integration);
    const form = await formRequest(
      { grant_type: 'client_credentials', phi_mode: 'no_phi' },
      { authorization: basic(integration.clientId, integration.clientSecret) },
    );
    assertTokenResponse(t, form, integration);
    t.equal(agency_id, integration.agencyId);
  },
);

t.test('scope narrows the grant and never widens it', async (t) => {
  const integration = await createTestIntegration(db, { scopes: ['external:patients:read', 'external:visits:read'] });
  const narrowed = await requestToken(tokenRequestBody(integration, 'no_phi', { scope: 'external:visits:read' }));
  t.equal(assertTokenResponse(t, narrowed, integration).scope, 'external:visits:read');
  const wider = await requestToken(
    tokenRequestBody(integration, 'no_phi', { scope: 'external:visits:read external:remittances:read' }),
  );
  t.equal(wider.statusCode, 400);
  t.match(wider.json(), {
    error: 'invalid_scope',
    code: 'PLATFORM_INVALID_REQUEST',
    details: { not_granted: ['external:remittances:read'] },
  });
  const all = await requestToken(tokenRequestBody(integration));
  t.equal(all.json().scope, 'external:patients:read external:visits:read', 'no scope asked: all granted ones');
});

t.test(
  'a grant type other than client_credentials, authorization_code and refresh_token is unsupported_grant_type',
  async (t) => {
    const integration = await createTestIntegration(db);
    for (const grantType of ['password', 'urn:ietf:params:oauth:grant-type:device_code']) {
      const res = await requestToken({ ...tokenRequestBody(integration), grant_type: grantType });
      t.equal(res.statusCode, 400, grantType);
      t.match(res.json(), { error: 'unsupported_grant_type', code: 'PLATFORM_INVALID_REQUEST' });
    }
    // The MCP surface's grants go to its authorization server (test/mcp/), which knows no integration's client id.
    for (const grantType of ['refresh_token', 'authorization_code']) {
      const res = await api.app.inject({
        method: 'POST',
        url: '/api/v1/oauth/token',
        payload: new URLSearchParams({
          grant_type: grantType,
          client_id: integration.clientId,
          code: 'x',
          refresh_token: 'x',
        }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      t.equal(res.statusCode, 401, grantType);
      t.equal(res.json().error, 'invalid_client');
    }
    const missing = await requestToken({ client_id: integration.clientId });
    t.match(missing.json(), { error: 'invalid_request', issues: [{ path: '/grant_type', keyword: 'required' }] });
  },
);

t.test('secret rotation: the old secret works during the overlap window, not after', async (t) => {
  const integration = await createTestIntegration(db);
  const rotated = await rotateClientSecret(db, integration.clientId, 24);
  t.not(rotated.clientSecret, integration.clientSecret);
  const withNew = { ...integration, clientSecret: rotated.clientSecret };
  assertTokenResponse(t, await requestToken(tokenRequestBody(integration)), integration);
  assertTokenResponse(t, await requestToken(tokenRequestBody(withNew)), integration);
  // The window ends: as if 24 hours had passed.
  await db
    .updateTable('client_secrets')
    .set({ expires_at: sql`now() - interval '1 second'` })
    .where('client_id', '=', integration.clientId)
    .where('expires_at', 'is not', null)
    .execute();
  t.equal((await requestToken(tokenRequestBody(integration))).statusCode, 401);
  assertTokenResponse(t, await requestToken(tokenRequestBody(withNew)), integration);
  const immediate = await rotateClientSecret(db, integration.clientId, 0);
  t.equal(
    (await requestToken(tokenRequestBody(withNew))).statusCode,
    401,
    '--overlap-hours 0 ends the old secret at once',
  );
  assertTokenResponse(
    t,
    await requestToken(tokenRequestBody({ ...integration, clientSecret: immediate.clientSecret })),
    integration,
  );
});

t.test(
  'failures for a client id are limited, but never refuse its right secret (someone else may know the client id)',
  async (t) => {
    const integration = await createTestIntegration(db);
    const wrong = { ...tokenRequestBody(integration), client_secret: 'sk_wrong' };
    for (let i = 0; i < TOKEN_FAILURE_LIMITS.perSubject; i++) t.equal((await requestToken(wrong)).statusCode, 401);
    const limited = await requestToken(wrong);
    t.equal(limited.statusCode, 429, 'a further wrong secret waits for the window to end');
    t.match(limited.json().error, { code: 'PLATFORM_RATE_LIMITED', retryable: true });
    const retryAfter = Number(limited.headers['retry-after']);
    t.ok(retryAfter >= 1 && retryAfter <= TOKEN_FAILURE_LIMITS.windowSeconds, `Retry-After ${retryAfter}`);
    assertTokenResponse(t, await requestToken(tokenRequestBody(integration)), integration);
    t.equal((await requestToken(wrong)).statusCode, 429, "the right secret does not clear the guesser's failures");
    const other = await createTestIntegration(db);
    assertTokenResponse(t, await requestToken(tokenRequestBody(other)), other);
  },
);

t.test('over its limit, a client id answers every failure alike: an unknown one too', async (t) => {
  const integration = await createTestIntegration(db);
  const unknown = { ...tokenRequestBody(integration), client_id: `cli_unknown_${randomUUID()}` };
  const wrong = { ...tokenRequestBody(integration), client_secret: 'sk_wrong' };
  for (let i = 0; i < TOKEN_FAILURE_LIMITS.perSubject; i++) {
    await requestToken(unknown);
    await requestToken(wrong);
  }
  const refusals = await Promise.all([unknown, wrong].map((body) => requestToken(body)));
  t.same(
    refusals.map((res) => res.statusCode),
    [429, 429],
  );
  // Only the request's own correlation id differs, and the seconds to wait may tick between the two.
  const [unknownBody, wrongBody] = refusals.map((res) => {
    const { correlationId: _, message, ...error } = res.json().error;
    return {
      ...error,
      message: message.replace(/\d+/g, 'N'),
      details: undefined,
      challenge: res.headers['www-authenticate'],
    };
  });
  t.same(unknownBody, wrongBody);
});

/** Failures from one address (the socket's, or the client's behind a trusted proxy), each for another unknown client id. */
async function failFrom(api: TestApi, count: number, options: { remoteAddress: string; forwardedFor?: () => string }) {
  const body = tokenRequestBody(await createTestIntegration(db));
  for (let i = 0; i < count; i++) {
    const headers = options.forwardedFor ? { 'x-forwarded-for': options.forwardedFor() } : undefined;
    const res = await api.request({
      method: 'POST',
      url: TOKEN_URL,
      payload: { ...body, client_id: `cli_guess_${randomUUID()}` },
      remoteAddress: options.remoteAddress,
      headers,
    });
    if (res.statusCode !== 401) throw new Error(`attempt ${i}: ${res.statusCode}`);
  }
}

t.test(
  'failed attempts are limited per remote address, whatever X-Forwarded-For says without TRUST_PROXY',
  async (t) => {
    const address = freshAddress();
    const integration = await createTestIntegration(db);
    await failFrom(api, TOKEN_FAILURE_LIMITS.perAddress, { remoteAddress: address, forwardedFor: freshAddress });
    const spoofed = await requestToken(tokenRequestBody(integration), {
      remoteAddress: address,
      headers: { 'x-forwarded-for': freshAddress() },
    });
    t.equal(spoofed.statusCode, 429, 'the address is refused before the secret is checked, so the hash is spared');
    t.ok(Number(spoofed.headers['retry-after']) >= 1);
    assertTokenResponse(t, await requestToken(tokenRequestBody(integration)), integration);
  },
);

t.test('behind a trusted proxy (TRUST_PROXY), each client address is counted apart', async (t) => {
  const proxied = await buildTestApp({ trustProxy: loadConfig({ TRUST_PROXY: '10.0.0.0/8' }).trustProxy }, t);
  const [proxy, guesser, client] = ['10.1.2.3', freshAddress(), freshAddress()];
  await failFrom(proxied, TOKEN_FAILURE_LIMITS.perAddress, {
    remoteAddress: proxy,
    forwardedFor: () => `${freshAddress()}, ${guesser}`,
  });
  const integration = await createTestIntegration(db);
  const fromClient = await proxied.request({
    method: 'POST',
    url: TOKEN_URL,
    payload: tokenRequestBody(integration),
    remoteAddress: proxy,
    headers: { 'x-forwarded-for': client },
  });
  assertTokenResponse(t, fromClient, integration);
  const fromGuesser = await proxied.request({
    method: 'POST',
    url: TOKEN_URL,
    payload: tokenRequestBody(integration),
    remoteAddress: proxy,
    headers: { 'x-forwarded-for': guesser },
  });
  t.equal(fromGuesser.statusCode, 429, "the guesser's own address is over its limit");
  const untrusted = await proxied.request({
    method: 'POST',
    url: TOKEN_URL,
    payload: tokenRequestBody(integration),
    remoteAddress: guesser,
    headers: { 'x-forwarded-for': client },
  });
  t.equal(untrusted.statusCode, 429, 'X-Forwarded-For from an address that is not a trusted proxy is ignored');
});

t.test('a repeated form parameter is refused (RFC 6749 3.2), naming it', async (t) => {
  const integration = await createTestIntegration(db);
  for (const name of ['phi_mode', 'client_id', 'scope']) {
    const fields = new URLSearchParams(tokenRequestBody(integration, 'no_phi', { scope: 'external:visits:read' }));
    fields.append(name, name === 'phi_mode' ? 'phi' : fields.get(name)!);
    const res = await api.request({
      method: 'POST',
      url: TOKEN_URL,
      payload: fields.toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      remoteAddress: freshAddress(),
    });
    t.equal(res.statusCode, 400, name);
    t.match(
      res.json(),
      { error: 'invalid_request', code: 'PLATFORM_INVALID_REQUEST', issues: [{ location: 'body', path: `/${name}` }] },
      name,
    );
    t.match(res.json().user_message, new RegExp(name), 'the message names the parameter');
  }
});

t.test('OAuth metadata (RFC 8414) and the JWKS with public keys only', async (t) => {
  await createTestIntegration(db).then((integration) => requestToken(tokenRequestBody(integration)));
  const metadata = await api.request({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
  t.match(metadata.json(), {
    issuer: 'http://localhost:3000',
    token_endpoint: 'http://localhost:3000/api/v1/oauth/token',
    jwks_uri: 'http://localhost:3000/.well-known/jwks.json',
    authorization_endpoint: 'http://localhost:3000/api/v1/oauth/authorize',
  });
  // One issuer: the machine flow and the MCP surface's people (test/mcp/ drives the latter).
  t.same(metadata.json().grant_types_supported, ['client_credentials', 'authorization_code', 'refresh_token']);
  t.same(metadata.json().token_endpoint_auth_methods_supported, [
    'client_secret_basic',
    'client_secret_post',
    'private_key_jwt',
    'none',
  ]);
  t.same(metadata.json().code_challenge_methods_supported, ['S256']);
  const jwks = (await api.request({ method: 'GET', url: '/.well-known/jwks.json' })).json();
  t.ok(jwks.keys.length >= 1);
  for (const key of jwks.keys) {
    t.same(Object.keys(key).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
    t.match(key, { kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
  }
});
