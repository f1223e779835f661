import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createClient } from '@hey-api/openapi-ts';
import t from 'tap';
import ts from 'typescript';
import { testDatabase } from '../helpers/database.js';
import { createTestIntegration } from '../helpers/identity.js';
import { listeningApp } from '../mcp/mcp-helpers.js';

// What an integrator does on day one: generate a client from the served document with a stock generator
// (@hey-api/openapi-ts), compile it with their own code, and call the API with it, unedited.
const { base } = await listeningApp(t);
const integration = await createTestIntegration((await testDatabase()).db);

/** The integrator's code: token, health, a patient list and a referral, then a refusal read through error.code. */
const integratorCode = `
import { client } from './client.gen.js';
import { createReferral, getHealth, issueToken, listPatients } from './sdk.gen.js';
import type { KnownErrorCode } from './types.gen.js';

export async function firstHour(clientId: string, clientSecret: string) {
  const token = await issueToken({ body: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, phi_mode: 'phi' }, throwOnError: true });
  client.setConfig({ auth: () => token.data.access_token });
  const health = await getHealth({ throwOnError: true });
  const patients = await listPatients({ query: { limit: 5 }, throwOnError: true });
  const referral = { service_line: 'home_health' as const, patient_name: 'Generated Client', patient_zip_code: '02108' };
  const created = await createReferral({ headers: { 'idempotency-key': 'generated-client-1' }, body: referral, throwOnError: true });
  const refused = await createReferral({ headers: { 'idempotency-key': 'generated-client-1' }, body: { ...referral, patient_name: 'Someone Else' } });
  const error = refused.error;
  // ApiError has a top-level code; ExternalPlatformError holds it in its error object.
  const code: KnownErrorCode | string | undefined = error === undefined ? undefined : 'code' in error ? error.code : error.error.code;
  return { scope: token.data.scope, health: health.data.data, patients: patients.data.data.length, referralId: created.data.data.referral_id, refusedStatus: refused.response?.status, code };
}
`;

const served = await fetch(`${base}/platform/api/openapi.json`);
const document = (await served.json()) as { servers: Array<{ url: string }> };
const dir = t.testdir();
await createClient({
  input: document,
  output: { path: dir },
  plugins: ['@hey-api/client-fetch', '@hey-api/typescript', '@hey-api/sdk'],
  logs: { level: 'silent' },
} as never);
const entry = join(dir, 'first-hour.ts');
writeFileSync(entry, integratorCode);

t.test(
  'the served document names where the API listens, so a generated client needs no base URL set by hand',
  async (t) => {
    t.equal(served.status, 200);
    t.same(
      document.servers.map((s) => s.url),
      [base],
    );
  },
);

// Compiling does not depend on the database engine: the PGlite run does it (about 7 s), the PostgreSQL run need not.
t.test(
  'the generated code and the integrator code compile under strict TypeScript',
  { skip: process.env.TEST_DATABASE_URL ? 'checked in the PGlite run' : false },
  async (t) => {
    const program = ts.createProgram([entry], {
      strict: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
      types: [],
      noEmit: true,
      skipLibCheck: true,
    });
    t.same(
      ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')),
      [],
    );
  },
);

t.test('the generated client gets a token, then reads health and patients and creates a referral', async (t) => {
  const { firstHour } = await import(pathToFileURL(entry).href);
  const result = await firstHour(integration.clientId, integration.clientSecret);
  t.match(result, {
    health: { status: String },
    patients: Number,
    referralId: /^ref_/,
    refusedStatus: 409,
    code: 'PLATFORM_IDEMPOTENCY_CONFLICT',
  });
  t.ok(result.scope.split(' ').includes('external:referrals:write'), 'the token carries the granted scopes');
});
