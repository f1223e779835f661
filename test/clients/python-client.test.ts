import { execFile, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { clientKey, createTestKeyIntegration } from '../helpers/client-keys.js';
import { testDatabase } from '../helpers/database.js';
import { createTestIntegration } from '../helpers/identity.js';
import { listeningApp } from '../mcp/mcp-helpers.js';

/**
 * The Python client (clients/python) against the real server listening on loopback: this file starts the servers and
 * makes the integrations, then runs the client's pytest suite as a child, with the addresses and credentials in its
 * environment. Debian's Python, not a pyenv one on PATH: .ci/run installs its packages.
 */
const PYTHON = '/usr/bin/python3';
const MODULES = ['httpx', 'pytest', 'jwt', 'cryptography'];
const probe = spawnSync(PYTHON, ['-c', `import ${MODULES.join(', ')}`], { encoding: 'utf8' });
if (probe.status !== 0) {
  t.plan(
    0,
    `${PYTHON} lacks ${MODULES.join(', ')} (Debian packages python3-httpx python3-pytest python3-jwt python3-cryptography): the Python client is not run`,
  );
} else {
  const { base } = await listeningApp(t);
  // Two seconds: a token of one (its exp in whole seconds) may expire before its first use on a busy machine.
  const shortLived = await listeningApp(t, undefined, { tokenTtlSeconds: 2 });
  const { db } = await testDatabase();
  const integration = await createTestIntegration(db);
  const limited = await createTestIntegration(db, { agencyId: integration.agencyId, rateLimitPerMinute: 2 });
  const rsaKey = clientKey('RS384');
  const ecKey = clientKey('ES384');
  const keyClientId = await createTestKeyIntegration(db, integration.agencyId, [rsaKey, ecKey]);
  const env = {
    ...process.env,
    SVC_TEST_BASE_URL: base,
    SVC_TEST_SHORT_LIVED_BASE_URL: shortLived.base,
    SVC_TEST_CLIENT_ID: integration.clientId,
    SVC_TEST_CLIENT_SECRET: integration.clientSecret,
    SVC_TEST_LIMITED_CLIENT_ID: limited.clientId,
    SVC_TEST_LIMITED_CLIENT_SECRET: limited.clientSecret,
    SVC_TEST_KEY_CLIENT_ID: keyClientId,
    SVC_TEST_RSA_KID: rsaKey.kid,
    SVC_TEST_RSA_PRIVATE_PEM: rsaKey.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    SVC_TEST_EC_KID: ecKey.kid,
    SVC_TEST_EC_PRIVATE_JWK: JSON.stringify(ecKey.privateKey.export({ format: 'jwk' })),
    PYTHONDONTWRITEBYTECODE: '1',
  };
  const tests = join(import.meta.dirname, '..', '..', 'clients', 'python', 'tests');
  // Asynchronous, so that the servers in this process answer while pytest runs.
  const run = await promisify(execFile)(PYTHON, ['-m', 'pytest', '-p', 'no:cacheprovider', '-rs', '-q', tests], {
    env,
    timeout: 100_000,
  }).then(
    ({ stdout }) => ({ ok: true, output: stdout }),
    (failure: { stdout?: string; stderr?: string; message: string }) => ({
      ok: false,
      output: `${failure.stdout ?? ''}${failure.stderr ?? failure.message}`,
    }),
  );
  t.comment(run.output.trim().split('\n').at(-1) ?? '');
  t.ok(run.ok, 'the Python client passes its tests against the live server', { output: run.output });
  t.notMatch(run.output, /skipped|SKIPPED/, 'none skipped: every live test ran');
}
