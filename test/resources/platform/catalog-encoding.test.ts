import { randomUUID } from 'node:crypto';
import t from 'tap';
import { callOperation } from '../../../src/gateway/core/direct-call.js';
import { buildTestApp, signIn } from '../../helpers/app.js';

const api = await buildTestApp();
const phi = await signIn(api, { phiMode: 'phi' });
const narrow = await signIn(api, {
  phiMode: 'no_phi',
  integration: { capabilities: ['oauth.token', 'platform.read'], scopes: ['external:patients:read'] },
});
const catalog = (session = phi, headers: Record<string, string> = {}) =>
  session.request({ method: 'GET', url: '/api/v1/ext/catalog', headers });

/** Counts JSON.stringify calls on the catalog document while `during` runs. */
async function catalogStringifications(during: () => Promise<unknown>): Promise<number> {
  const stringify = JSON.stringify;
  let count = 0;
  JSON.stringify = ((value: unknown, ...rest: []) => {
    if ((value as { data?: { routes?: unknown } } | null)?.data?.routes) count++;
    return stringify(value, ...rest);
  }) as typeof JSON.stringify;
  try {
    await during();
  } finally {
    JSON.stringify = stringify;
  }
  return count;
}

t.test('every caller gets the same catalog bytes, whatever its grants and PHI mode', async (t) => {
  const first = await catalog();
  const other = await catalog(narrow);
  t.equal(first.statusCode, 200);
  t.equal(other.statusCode, 200);
  t.equal(other.body, first.body);
  t.equal(first.headers['content-type'], 'application/json; charset=utf-8');
});

t.test('once encoded, the catalog is sent without being stringified again', async (t) => {
  await catalog();
  t.equal(await catalogStringifications(() => Promise.all([catalog(), catalog(narrow), catalog()])), 0);
});

t.test('a version 1 call gets its own shape and its deprecation notice, not the encoded version 2 bytes', async (t) => {
  const current = await catalog();
  const v1 = await catalog(phi, { 'svc-contract-version': '1' });
  t.equal(v1.headers['svc-extension-contract-version'], '1');
  t.ok(v1.headers.deprecation);
  t.match(v1.json().meta.deprecations, [{ kind: 'contract_version', name: '1' }]);
  const after = await catalog();
  t.equal(after.body, current.body, 'the version 2 bytes are unchanged by the version 1 call');
  t.notOk(after.headers.deprecation);
});

t.test('a direct call (the MCP transport) gets the catalog as a document, equal to the HTTP body', async (t) => {
  const http = await catalog();
  const now = Date.now();
  const direct = await callOperation(api.app.gateway, {
    operationId: 'getCatalog',
    principal: {
      agencyId: phi.integration.agencyId,
      extensionId: phi.integration.extensionId,
      clientId: phi.integration.clientId,
      phiMode: 'phi',
      scopes: new Set<string>(),
      tokenId: `tok_direct_${randomUUID()}`,
      issuedAt: new Date(now - 1_000),
      expiresAt: new Date(now + 600_000),
    },
  });
  t.equal(direct.status, 200);
  t.same(direct.body, http.json());
});
