import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Teardown } from './database.js';
import { freePort } from './ports.js';

type Json = Record<string, any>;

export interface Call {
  operationId: string;
  method: string;
  path: string;
  query?: Record<string, string | number>;
  body?: Json;
  headers?: Record<string, string>;
}

export interface Outcome {
  call: Call;
  status: number;
  violations: string[];
  body: Json | undefined;
}

export interface Credentials {
  clientId: string;
  clientSecret: string;
}

/** The pinned devDependency's own bin, run on this Node: no registry at test time, and the lockfile fixes its tree. */
function prismBin(): string {
  const manifest = createRequire(import.meta.url).resolve('@stoplight/prism-cli/package.json');
  return join(dirname(manifest), JSON.parse(readFileSync(manifest, 'utf8')).bin.prism);
}

/** `prism proxy --errors` for `document` (a URL or a file) in front of `upstream`; stopped when `t` ends. */
export async function startPrism(t: Teardown, document: string, upstream: string): Promise<string> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [prismBin(), 'proxy', document, upstream, '--errors', '-h', '127.0.0.1', '-p', String(port)],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  t.teardown(() => child.kill('SIGTERM'));
  const url = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(200)) {
    if (child.exitCode !== null)
      throw new Error(`prism exited (${child.exitCode}) before listening on ${url}: ${stderr}`);
    if (
      await fetch(`${url}/livez`).then(
        () => true,
        () => false,
      )
    )
      return url;
  }
  throw new Error(`prism did not listen on ${url} within 60 s: ${stderr}`);
}

/** The sl-violations header's list; past 8 KB Prism cuts it and prefixes "Too many violations!", which is kept as one. */
function listedViolations(header: string | null): Json[] {
  if (!header) return [];
  return header.startsWith('[') ? JSON.parse(header) : [{ message: header.slice(0, 500) }];
}

/** Prism's findings: the sl-violations header, or its own answer when --errors turned a violation into an error. */
function violationsOf(response: Response, body: Json | undefined): string[] {
  const listed = listedViolations(response.headers.get('sl-violations'));
  const refusal =
    typeof body?.type === 'string' && body.type.includes('stoplight') ? [`${body.title}: ${body.detail ?? ''}`] : [];
  const fromBody: Json[] = Array.isArray(body?.validation) ? body.validation : [];
  const described = [...listed, ...fromBody].map(
    (v) => `${v.location?.join('.') ?? ''} ${v.message} (${v.severity ?? ''})`,
  );
  return [...new Set(described), ...refusal];
}

/** One call through the proxy; `version` undefined sends no svc-contract-version header. */
export async function send(
  proxy: string,
  version: string | undefined,
  token: string | undefined,
  call: Call,
): Promise<Outcome> {
  const url = new URL(proxy + call.path);
  for (const [name, value] of Object.entries(call.query ?? {})) url.searchParams.set(name, String(value));
  const headers: Record<string, string> = { ...(version ? { 'svc-contract-version': version } : {}), ...call.headers };
  if (token) headers.authorization = `Bearer ${token}`;
  if (call.body) headers['content-type'] = 'application/json';
  const response = await fetch(url, {
    method: call.method,
    headers,
    body: call.body ? JSON.stringify(call.body) : undefined,
  });
  const text = await response.text();
  let body: Json | undefined;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { call, status: response.status, violations: violationsOf(response, body), body };
}

export const issueToken = (credentials: Credentials, phiMode: 'phi' | 'no_phi'): Call => ({
  operationId: 'issueToken',
  method: 'POST',
  path: '/api/v1/oauth/token',
  body: {
    grant_type: 'client_credentials',
    client_id: credentials.clientId,
    client_secret: credentials.clientSecret,
    phi_mode: phiMode,
  },
});

/**
 * A walk of every operation with one contract version (undefined: the header left out), each step using what
 * earlier answers returned (ids, versions). `label` (letters and digits) keeps the records of several walks on one agency apart.
 */
export async function walk(
  proxy: string,
  version: string | undefined,
  credentials: Credentials,
  label: string,
): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  let token: string | undefined;
  const run = async (call: Call) => {
    const outcome = await send(proxy, version, token, call);
    outcomes.push(outcome);
    return outcome.body;
  };
  const key = () => `walk-${label}-${Math.random().toString(36).slice(2, 12)}`;
  const firstId = async (operationId: string, path: string, query: Call['query'] = { limit: 5 }) =>
    (await run({ operationId, method: 'GET', path, query }))?.data?.[0]?.id as string | undefined;
  const detail = async (operationId: string, path: string, id: string | undefined, query?: Call['query']) =>
    id && run({ operationId, method: 'GET', path: path.replace('{id}', id), query });

  token = (await run(issueToken(credentials, 'phi')))?.access_token;
  await run({ operationId: 'getHealth', method: 'GET', path: '/api/v1/ext/health' });
  const catalog = await run({ operationId: 'getCatalog', method: 'GET', path: '/api/v1/ext/catalog' });

  await detail('getPatient', '/api/v1/ext/patients/{id}', await firstId('listPatients', '/api/v1/ext/patients'));
  await detail('getReferral', '/api/v1/ext/referrals/{id}', await firstId('listReferrals', '/api/v1/ext/referrals'));
  await detail('getIntake', '/api/v1/ext/intakes/{id}', await firstId('listIntakes', '/api/v1/ext/intakes'));
  await detail('getVisit', '/api/v1/ext/visits/{id}', await firstId('listVisits', '/api/v1/ext/visits'));
  await detail(
    'getPhysicianOrder',
    '/api/v1/ext/physician-orders/{id}',
    await firstId('listPhysicianOrders', '/api/v1/ext/physician-orders'),
  );
  await detail(
    'listRemittanceAllocations',
    '/api/v1/ext/remittances/{id}/allocations',
    await firstId('listRemittances', '/api/v1/ext/remittances'),
    { limit: 5 },
  );
  await detail(
    'listWorkingCollectionRows',
    '/api/v1/ext/working-collections/{id}/rows',
    await firstId('listWorkingCollections', '/api/v1/ext/working-collections'),
    { limit: 5 },
  );
  await run({
    operationId: 'getHhvbpSummary',
    method: 'GET',
    path: '/api/v1/ext/quality/hhvbp/summary',
    query: { performance_year: 2025 },
  });
  await run({
    operationId: 'listHhvbpMeasures',
    method: 'GET',
    path: '/api/v1/ext/quality/hhvbp/measures',
    query: { performance_year: 2025 },
  });

  const patient = (
    await run({
      operationId: 'listPatients',
      method: 'GET',
      path: '/api/v1/ext/patients',
      query: { limit: 1, status: 'active' },
    })
  )?.data?.[0];
  await run({
    operationId: 'createReferral',
    method: 'POST',
    path: '/api/v1/ext/referrals',
    headers: { 'idempotency-key': key() },
    body: {
      service_line: 'home_health',
      patient_first_name: 'Walk',
      patient_last_name: `Visitor${label}`,
      patient_dob: '1950-02-03',
      patient_zip_code: '02108',
      referral_type: 'soc',
    },
  });
  const task = (
    await run({
      operationId: 'createTask',
      method: 'POST',
      path: '/api/v1/ext/tasks',
      headers: { 'idempotency-key': key() },
      body: {
        title: 'Call to schedule the start-of-care visit',
        priority: 'high',
        due_date: '2026-12-01',
        ...(patient ? { related_resource: { type: 'patient', id: patient.id } } : {}),
      },
    })
  )?.data;
  if (task) {
    const current =
      (await run({ operationId: 'getTask', method: 'GET', path: `/api/v1/ext/tasks/${task.id}` }))?.data ?? task;
    await run({
      operationId: 'updateTask',
      method: 'PATCH',
      path: `/api/v1/ext/tasks/${task.id}`,
      headers: { 'idempotency-key': key() },
      body: { status: 'in_progress', version: current.version },
    });
  }

  const query =
    (catalog?.data?.queries as Json[] | undefined)?.find((q) => !(q.parameters ?? []).some((p: Json) => p.required)) ??
    catalog?.data?.queries?.[0];
  if (query) {
    await run({
      operationId: 'runQuery',
      method: 'POST',
      path: `/api/v1/ext/queries/${query.id}/run`,
      body: { limit: 5 },
    });
    const created = (
      await run({
        operationId: 'createQueryToken',
        method: 'POST',
        path: '/api/v1/ext/query-tokens',
        headers: { 'idempotency-key': key() },
        body: { name: `Walk workbook ${label}`, query_id: query.id },
      })
    )?.data;
    await run({ operationId: 'listQueryTokens', method: 'GET', path: '/api/v1/ext/query-tokens', query: { limit: 5 } });
    if (created) {
      await run({
        operationId: 'getQueryTokenExcelTemplate',
        method: 'GET',
        path: `/api/v1/ext/query-tokens/${created.id}/templates/excel/power-query`,
      });
      await run({
        operationId: 'revokeQueryToken',
        method: 'DELETE',
        path: `/api/v1/ext/query-tokens/${created.id}`,
        headers: { 'idempotency-key': key() },
      });
    }
  }
  return outcomes;
}

export function operationIds(document: Json): string[] {
  return Object.values(document.paths as Record<string, Record<string, Json>>).flatMap((item) =>
    Object.values(item).flatMap((op) => (typeof op?.operationId === 'string' ? [op.operationId] : [])),
  );
}
