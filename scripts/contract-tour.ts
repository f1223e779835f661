/**
 * `npm run contract:tour`: a validation proxy (Prism, `proxy --errors`) in front of a started server checks a
 * scripted tour of every operation of the served documents, for contract versions 1 and 2, against the document of
 * that version (/platform/api/v1/openapi.json, /platform/api/v2/openapi.json). Prints each call and every violation
 * Prism reports (its sl-violations header, or its own error answer under --errors); exits 1 on any violation or when
 * an operation of a document was not visited. Slow (a seeded agency, two proxies): not part of `npm test`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createAgency } from '../src/admin/agency.js';
import { createIntegration } from '../src/admin/integration.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { seedDemoAgency } from '../src/demo/seed.js';
import { CONTRACT_CAPABILITIES, PHI_MODES } from '../src/identity/grants.js';
import { npmStartArgs, root, start, stopAll } from './bench-processes.js';

type Json = Record<string, any>;
interface Call {
  operationId: string;
  method: string;
  path: string;
  query?: Record<string, string | number>;
  body?: Json;
  headers?: Record<string, string>;
}
interface Outcome {
  call: Call;
  status: number;
  violations: string[];
  body: Json | undefined;
}

const AGENCY = 'tour';
const tmp = mkdtempSync(join(tmpdir(), 'contract-tour-'));
const env = { ...process.env, HOST: '127.0.0.1', DATA_DIR: join(tmp, 'data'), LOG_LEVEL: 'warn', DATABASE_URL: '' };

async function prepare() {
  const database = await openDatabase({ dataDir: env.DATA_DIR, statementTimeoutMs: 0 });
  try {
    await createAgency(database.db, { id: AGENCY, name: 'Contract tour agency', serviceZips: ['02108'] });
    await seedDemoAgency(database.db, { agencyId: AGENCY, size: 'small' });
    return await createIntegration(database.db, { agencyId: AGENCY, name: 'Contract tour', capabilities: [...CONTRACT_CAPABILITIES], phiModes: [...PHI_MODES] });
  } finally {
    await database.close();
  }
}

/** 5.16 needs Node 24.18 or later. */
const PRISM = '@stoplight/prism-cli@5.14.2';
const proxies: ChildProcess[] = [];
async function startProxy(document: string, upstream: string, port: number): Promise<string> {
  // Fetched on first use rather than a dev dependency: about 200 packages that only this manual tour needs.
  const child = spawn('npx', ['-y', PRISM, 'proxy', document, upstream, '--errors', '-h', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'ignore', 2] });
  proxies.push(child);
  const url = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(300)) {
    if (child.exitCode !== null) throw new Error(`prism exited (${child.exitCode}) before listening on ${url}`);
    if (await fetch(`${url}/livez`).then(() => true, () => false)) return url;
  }
  throw new Error(`prism did not listen on ${url} within 60 s`);
}

/** Prism's findings: the sl-violations header, or its own answer when --errors turned a violation into an error. */
function violationsOf(response: Response, body: Json | undefined): string[] {
  const header = response.headers.get('sl-violations');
  const listed: Json[] = header ? JSON.parse(header) : [];
  const refusal = typeof body?.type === 'string' && body.type.includes('stoplight') ? [`${body.title}: ${body.detail ?? ''}`] : [];
  const fromBody: Json[] = Array.isArray(body?.validation) ? body.validation : [];
  const described = [...listed, ...fromBody].map((v) => `${v.location?.join('.') ?? ''} ${v.message} (${v.severity ?? ''})`);
  return [...new Set(described), ...refusal];
}

async function send(proxy: string, version: string, token: string | undefined, call: Call): Promise<Outcome> {
  const url = new URL(proxy + call.path);
  for (const [name, value] of Object.entries(call.query ?? {})) url.searchParams.set(name, String(value));
  const headers: Record<string, string> = { 'svc-contract-version': version, ...call.headers };
  if (token) headers.authorization = `Bearer ${token}`;
  if (call.body) headers['content-type'] = 'application/json';
  const response = await fetch(url, { method: call.method, headers, body: call.body ? JSON.stringify(call.body) : undefined });
  const text = await response.text();
  let body: Json | undefined;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { call, status: response.status, violations: violationsOf(response, body), body };
}

/** The tour of one version: each step may use what earlier answers returned (ids, versions). */
async function tour(proxy: string, version: string, credentials: { clientId: string; clientSecret: string }): Promise<{ outcomes: Outcome[]; canary: Outcome }> {
  const outcomes: Outcome[] = [];
  let token: string | undefined;
  const run = async (call: Call) => {
    const outcome = await send(proxy, version, token, call);
    outcomes.push(outcome);
    return outcome.body;
  };
  const key = () => `tour-${version}-${Math.random().toString(36).slice(2, 12)}`;
  const firstId = async (operationId: string, path: string, query: Call['query'] = { limit: 5 }) => (await run({ operationId, method: 'GET', path, query }))?.data?.[0]?.id as string | undefined;
  const detail = async (operationId: string, path: string, id: string | undefined, query?: Call['query']) => id && run({ operationId, method: 'GET', path: path.replace('{id}', id), query });

  const tokenBody = { grant_type: 'client_credentials', client_id: credentials.clientId, client_secret: credentials.clientSecret, phi_mode: 'phi' };
  token = (await run({ operationId: 'issueToken', method: 'POST', path: '/api/v1/oauth/token', body: tokenBody }))?.access_token;
  await run({ operationId: 'getHealth', method: 'GET', path: '/api/v1/ext/health' });
  const catalog = await run({ operationId: 'getCatalog', method: 'GET', path: '/api/v1/ext/catalog' });

  await detail('getPatient', '/api/v1/ext/patients/{id}', await firstId('listPatients', '/api/v1/ext/patients'));
  await detail('getReferral', '/api/v1/ext/referrals/{id}', await firstId('listReferrals', '/api/v1/ext/referrals'));
  await detail('getIntake', '/api/v1/ext/intakes/{id}', await firstId('listIntakes', '/api/v1/ext/intakes'));
  await detail('getVisit', '/api/v1/ext/visits/{id}', await firstId('listVisits', '/api/v1/ext/visits'));
  await detail('getPhysicianOrder', '/api/v1/ext/physician-orders/{id}', await firstId('listPhysicianOrders', '/api/v1/ext/physician-orders'));
  await detail('listRemittanceAllocations', '/api/v1/ext/remittances/{id}/allocations', await firstId('listRemittances', '/api/v1/ext/remittances'), { limit: 5 });
  await detail('listWorkingCollectionRows', '/api/v1/ext/working-collections/{id}/rows', await firstId('listWorkingCollections', '/api/v1/ext/working-collections'), { limit: 5 });
  await run({ operationId: 'getHhvbpSummary', method: 'GET', path: '/api/v1/ext/quality/hhvbp/summary', query: { performance_year: 2025 } });
  await run({ operationId: 'listHhvbpMeasures', method: 'GET', path: '/api/v1/ext/quality/hhvbp/measures', query: { performance_year: 2025 } });

  const patient = (await run({ operationId: 'listPatients', method: 'GET', path: '/api/v1/ext/patients', query: { limit: 1, status: 'active' } }))?.data?.[0];
  await run({ operationId: 'createReferral', method: 'POST', path: '/api/v1/ext/referrals', headers: { 'idempotency-key': key() }, body: { service_line: 'home_health', patient_first_name: 'Tour', patient_last_name: `Visitor${version}`, patient_dob: '1950-02-03', patient_zip_code: '02108', referral_type: 'soc' } });
  const task = (await run({ operationId: 'createTask', method: 'POST', path: '/api/v1/ext/tasks', headers: { 'idempotency-key': key() }, body: { title: 'Call to schedule the start-of-care visit', priority: 'high', due_date: '2026-12-01', ...(patient ? { related_resource: { type: 'patient', id: patient.id } } : {}) } }))?.data;
  if (task) {
    const current = (await run({ operationId: 'getTask', method: 'GET', path: `/api/v1/ext/tasks/${task.id}` }))?.data ?? task;
    await run({ operationId: 'updateTask', method: 'PATCH', path: `/api/v1/ext/tasks/${task.id}`, headers: { 'idempotency-key': key() }, body: { status: 'in_progress', version: current.version } });
  }

  const query = (catalog?.data?.queries as Json[] | undefined)?.find((q) => !(q.parameters ?? []).some((p: Json) => p.required)) ?? catalog?.data?.queries?.[0];
  if (query) {
    await run({ operationId: 'runQuery', method: 'POST', path: `/api/v1/ext/queries/${query.id}/run`, body: { limit: 5 } });
    const created = (await run({ operationId: 'createQueryToken', method: 'POST', path: '/api/v1/ext/query-tokens', headers: { 'idempotency-key': key() }, body: { name: `Tour workbook v${version}`, query_id: query.id } }))?.data;
    await run({ operationId: 'listQueryTokens', method: 'GET', path: '/api/v1/ext/query-tokens', query: { limit: 5 } });
    if (created) {
      await run({ operationId: 'getQueryTokenExcelTemplate', method: 'GET', path: `/api/v1/ext/query-tokens/${created.id}/templates/excel/power-query` });
      await run({ operationId: 'revokeQueryToken', method: 'DELETE', path: `/api/v1/ext/query-tokens/${created.id}`, headers: { 'idempotency-key': key() } });
    }
  }
  // A request that breaks the document: the proxy must flag it, or it is not validating and the tour proves nothing.
  const canary = await send(proxy, version, token, { operationId: 'listPatients', method: 'GET', path: '/api/v1/ext/patients', query: { limit: 'many' } });
  return { outcomes, canary };
}

function operationIds(document: Json): string[] {
  return Object.values(document.paths as Record<string, Record<string, Json>>).flatMap((item) => Object.values(item).flatMap((op) => (typeof op?.operationId === 'string' ? [op.operationId] : [])));
}

async function main() {
  console.error('preparing a seeded agency on the embedded store');
  const credentials = await prepare();
  const service = await start('service', npmStartArgs(), env);
  const port = Number(new URL(service).port);
  let failed = false;
  for (const version of ['1', '2']) {
    const documentUrl = `${service}/platform/api/v${version}/openapi.json`;
    const document = (await (await fetch(documentUrl)).json()) as Json;
    const proxy = await startProxy(documentUrl, service, port + Number(version) * 7 + 1000);
    const { outcomes, canary } = await tour(proxy, version, credentials);
    const visited = new Set(outcomes.map((o) => o.call.operationId));
    const missed = operationIds(document).filter((id) => !visited.has(id));
    const violations = outcomes.filter((o) => o.violations.length > 0);
    const unexpected = outcomes.filter((o) => o.status >= 400);
    console.log(`\n== contract version ${version} (${document.info.version}, ${documentUrl}) ==`);
    for (const o of outcomes) console.log(`${String(o.status).padEnd(4)} ${o.call.method.padEnd(6)} ${o.call.path}${o.violations.length ? `  VIOLATIONS: ${o.violations.join('; ')}` : ''}`);
    console.log(`calls ${outcomes.length}, operations visited ${visited.size} of ${operationIds(document).length}, answers >= 400: ${unexpected.length}, calls with violations: ${violations.length}`);
    if (missed.length) console.log(`not visited: ${missed.join(', ')}`);
    console.log(`canary (limit=many, which the document refuses): ${canary.status}, ${canary.violations.length ? `flagged: ${canary.violations.join('; ')}` : 'NOT FLAGGED: the proxy is not validating'}`);
    failed ||= violations.length > 0 || missed.length > 0 || unexpected.length > 0 || canary.violations.length === 0;
  }
  failed ||= !(await responsesAreChecked(service, port + 1100, credentials));
  if (failed) process.exitCode = 1;
}

/** The response side of the canary: a document that requires a health field the server never sends must be flagged. */
async function responsesAreChecked(service: string, port: number, credentials: { clientId: string; clientSecret: string }): Promise<boolean> {
  const document = (await (await fetch(`${service}/platform/api/v2/openapi.json`)).json()) as Json;
  const health = document.components.schemas.Health;
  document.components.schemas.Health = { ...health, required: [...(health.required ?? []), 'tour_canary'] };
  const doctored = join(tmp, 'doctored.json');
  writeFileSync(doctored, JSON.stringify(document));
  const proxy = await startProxy(doctored, service, port);
  const tokenBody = { grant_type: 'client_credentials', client_id: credentials.clientId, client_secret: credentials.clientSecret, phi_mode: 'no_phi' };
  const token = (await send(proxy, '2', undefined, { operationId: 'issueToken', method: 'POST', path: '/api/v1/oauth/token', body: tokenBody })).body?.access_token;
  const canary = await send(proxy, '2', token, { operationId: 'getHealth', method: 'GET', path: '/api/v1/ext/health' });
  console.log(`\ncanary (a document requiring data.tour_canary of health): ${canary.status}, ${canary.violations.length ? `flagged: ${canary.violations.join('; ')}` : 'NOT FLAGGED: the proxy does not check responses'}`);
  return canary.violations.length > 0;
}

try {
  await main();
} finally {
  for (const child of proxies) child.kill('SIGTERM');
  await stopAll();
  rmSync(tmp, { recursive: true, force: true });
}
