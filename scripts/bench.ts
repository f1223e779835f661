/**
 * Load benchmark: the real service against a bare Fastify baseline, both in child processes on loopback
 * and measured alternately in the same run. Results are ratios (service / baseline) because absolute
 * numbers depend on the machine. Gateway scenarios compare with the service's own bytes served bare;
 * clinical scenarios (PostgreSQL only) with minimal live routes doing the least equivalent work.
 * Usage: see USAGE (npm run bench -- --help).
 */
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig, type Config } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { ensureKeyFile } from '../src/identity/key-encryption-keys.js';
import type { BaselineConfig, BaselineRoute } from './bench-baseline.js';
import { CLINICAL_SPECS as PATIENT_SPECS, POOLED_SPECS, prepareClinical, type ClinicalSpec } from './bench-clinical.js';
import { ORDER_SPECS } from './bench-orders.js';
import { benchImport, IMPORT_SCENARIO, REMITTANCE_SPECS, type ImportResult } from './bench-remittances.js';
import { QUERY_SPECS } from './bench-queries.js';
import { prepareBenchIdentity } from './bench-identity.js';
import { measure, WARMUP_RESPONSES, type Measurement, type Timing } from './bench-load.js';
import { npmStartArgs, root, start, stopAll, untilAdmitting } from './bench-processes.js';
import {
  buildScenario,
  sides,
  firstRequest,
  GATEWAY_SPECS,
  scenarioFilter,
  type Request,
  type Scenario,
  type Server,
  type Side,
  type Target,
} from './bench-scenarios.js';

const CLINICAL_SPECS: ClinicalSpec[] = [...PATIENT_SPECS, ...ORDER_SPECS, ...REMITTANCE_SPECS, ...QUERY_SPECS];
const SCENARIO_NAMES = [
  ...[...GATEWAY_SPECS, ...CLINICAL_SPECS, ...POOLED_SPECS].map((s) => s.name),
  IMPORT_SCENARIO,
].join('; ');
const isPooled = (spec: ClinicalSpec) => POOLED_SPECS.includes(spec);
const USAGE = `usage: [BENCH_DATABASE_URL=postgres://…] npm run bench -- [--quick] [--duration S] [--connections 10,50] [--scenarios NAME,…]
scenarios: ${SCENARIO_NAMES}`;

function readOptions() {
  const { values } = parseArgs({
    options: {
      connections: { type: 'string' },
      duration: { type: 'string' },
      help: { type: 'boolean', default: false },
      quick: { type: 'boolean', default: false },
      scenarios: { type: 'string' },
    },
  });
  const connections = values.connections?.split(',').map(Number);
  const duration = values.duration !== undefined ? Number(values.duration) : values.quick ? 3 : 10;
  if (connections && !connections.every((c) => Number.isInteger(c) && c > 0)) {
    throw new Error(`--connections must be positive integers, got "${values.connections}"`);
  }
  if (!(duration > 0)) throw new Error(`--duration must be a positive number of seconds, got "${values.duration}"`);
  return {
    args: values,
    connectionOverride: connections,
    timing: { duration, warmup: values.quick ? 1 : 2 } satisfies Timing,
  };
}

let options: ReturnType<typeof readOptions>;
try {
  options = readOptions();
} catch (err) {
  console.error(`${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
  process.exit(2);
}
if (options.args.help) {
  console.log(USAGE);
  process.exit(0);
}
const { args, connectionOverride, timing } = options;

/** More than the 10,000 verified tokens the authenticator remembers, so the rotation never hits its cache. */
const FRESH_TOKENS = 12_000;

const tmp = mkdtempSync(join(tmpdir(), 'bench-'));
let cleaning: Promise<void> | undefined;
let cleanupCollector: () => void = () => {};
const cleanup = () =>
  (cleaning ??= stopAll().then(() => {
    cleanupCollector();
    rmSync(tmp, { recursive: true, force: true });
  }));
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void cleanup().finally(() => process.exit(130)));
}

interface Selection {
  gateway: typeof GATEWAY_SPECS;
  clinical: ClinicalSpec[];
  /** Whether to measure the 50,000-claim 835 import (not a request scenario: it runs alone, before the service). */
  eraImport: boolean;
  /** Why some scenarios do not run; printed under the table. */
  notes: string[];
}

function select(databaseUrl: string | undefined): Selection {
  const wanted = scenarioFilter(args.scenarios);
  const gateway = GATEWAY_SPECS.filter((s) => wanted(s.name));
  let clinical = [...CLINICAL_SPECS, ...POOLED_SPECS].filter((s) => wanted(s.name));
  const notes: string[] = [];
  const pooled = clinical.filter(isPooled);
  if (pooled.length > 0 && !process.env.BENCH_POOLED_DATABASE_URL) {
    notes.push(
      `skipped the PgBouncer scenarios (${pooled.length}): set BENCH_POOLED_DATABASE_URL to a PgBouncer in transaction mode in front of BENCH_DATABASE_URL (scripts/pgbouncer-temp.sh starts one)`,
    );
    clinical = clinical.filter((s) => !isPooled(s));
  }
  if (clinical.length > 0 && !databaseUrl) {
    notes.push(
      `skipped the clinical scenarios (${clinical.length}): they need PostgreSQL (set BENCH_DATABASE_URL); the embedded store cannot hold the large agency reasonably`,
    );
    clinical = [];
  }
  const eraImport = wanted(IMPORT_SCENARIO);
  if (gateway.length + clinical.length === 0 && !eraImport && notes.length === 0) {
    throw new Error(`no scenario matches --scenarios "${args.scenarios}"; scenarios: ${SCENARIO_NAMES}`);
  }
  return { gateway, clinical, eraImport, notes };
}

/**
 * Before the service starts: the embedded store admits one process at a time. No statement timeout: seeding the large
 * agency and vacuuming it after took 15 minutes and more than 15 s per statement on a loaded 2-core machine.
 */
async function prepareData(config: Config, selection: Selection) {
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    statementTimeoutMs: 0,
  });
  try {
    const identity =
      selection.gateway.length > 0 ? await prepareBenchIdentity(database.db, config, FRESH_TOKENS) : undefined;
    const clinical =
      selection.clinical.length > 0 ? await prepareClinical(database.db, config, selection.clinical) : {};
    return { identity, clinical };
  } finally {
    await database.close();
  }
}

async function buildScenarios(
  config: Config,
  selection: Selection,
  prepared: Awaited<ReturnType<typeof prepareData>>,
  serviceUrl: string,
): Promise<Scenario[]> {
  const scenarios: Scenario[] = [];
  for (const spec of selection.gateway) scenarios.push(await buildScenario(spec, prepared.identity!));
  for (const spec of selection.clinical)
    scenarios.push(
      await buildScenario(spec, { ...prepared.clinical[spec.agency]!, serviceUrl, databaseUrl: config.databaseUrl! }),
    );
  return scenarios;
}

async function send(url: string, request: Request) {
  await request.tokens?.freshFor(0);
  const sent = firstRequest(request);
  const response = await fetch(url + sent.path, { method: sent.method, headers: sent.headers, body: sent.body });
  const contentType = response.headers.get('content-type') ?? 'application/octet-stream';
  return { status: response.status, ok: response.ok, contentType, body: Buffer.from(await response.arrayBuffer()) };
}

function refuse(scenario: Scenario, target: Target, request: Request, status: number, body: Buffer): never {
  throw new Error(
    `${scenario.name}: ${target} ${request.method} ${request.path} answered ${status}, not 2xx; refusing to benchmark an error:\n${body.toString('utf8').slice(0, 500)}`,
  );
}

/**
 * Sends each scenario's request to the service once. Skips an operation this deployment does not
 * support (501), refuses any other error, and records the bytes the baseline serves (bare, and behind
 * fast-jwt) for the scenarios without a live baseline route.
 */
async function checkService(url: string, scenarios: Scenario[], notes: string[]) {
  const runnable: Scenario[] = [];
  const routes: BaselineRoute[] = [];
  for (const scenario of scenarios) {
    const { status, ok, contentType, body } = await send(url, scenario.service);
    if (status === 501 && body.includes('PLATFORM_UNSUPPORTED_OPERATION')) {
      notes.push(
        `skipped "${scenario.name}": the service answers 501 PLATFORM_UNSUPPORTED_OPERATION (not built in this checkout)`,
      );
      continue;
    }
    if (!ok) refuse(scenario, 'service', scenario.service, status, body);
    runnable.push(scenario);
    const { method, path } = scenario.service;
    // Scenarios that differ only in how they authenticate share one baseline route.
    if (scenario.baseline || routes.some((r) => r.method === method && r.path === path)) continue;
    routes.push({ method, path, status, contentType, bodyBase64: body.toString('base64') });
  }
  return { runnable, routes };
}

/** Each variant answers its scenarios' request with a 2xx before it is measured. */
async function checkVariants(urls: Partial<Record<Server, string>>, scenarios: Scenario[]): Promise<void> {
  for (const scenario of scenarios) {
    for (const { server, request } of Object.values(sides(scenario))) {
      if (server === 'service' || server === 'baseline') continue;
      const { status, ok, body } = await send(urls[server]!, request);
      if (!ok) refuse(scenario, 'service', request, status, body);
    }
  }
}

async function checkBaseline(url: string, scenarios: Scenario[]): Promise<void> {
  for (const scenario of scenarios) {
    for (const { server, request } of Object.values(sides(scenario))) {
      if (server !== 'baseline') continue;
      const { status, ok, body } = await send(url, request);
      if (!ok) refuse(scenario, 'baseline', request, status, body);
    }
  }
}

function baselineConfig(
  config: Config,
  routes: BaselineRoute[],
  serviceUrl: string,
  clinical: boolean,
): BaselineConfig {
  const tokens = {
    jwksUrl: `${serviceUrl}/.well-known/jwks.json`,
    issuer: config.tokenIssuer,
    audience: config.tokenAudience,
  };
  if (!clinical || !config.databaseUrl) return { routes, tokens };
  return { routes, tokens, clinical: { databaseUrl: config.databaseUrl, poolMax: config.db.poolMax } };
}

interface Result extends Measurement {
  scenario: string;
  connections: number;
  /** Each side's label (the table's target column) and request. */
  sides: Record<Target, { label: Side['label']; request: string }>;
  goal: number | null;
}

const described = (side: Side) => ({ label: side.label, request: `${side.request.method} ${side.request.path}` });

async function measureAll(urls: Partial<Record<Server, string>>, scenarios: Scenario[]): Promise<Result[]> {
  const results: Result[] = [];
  for (const scenario of scenarios) {
    const plan = sides(scenario);
    for (const connections of connectionOverride ?? scenario.connections) {
      console.error(
        `${scenario.name} x${connections}: warm-up (slices of ${timing.warmup} s, until ${WARMUP_RESPONSES} responses) each, then ${timing.duration} s each in alternating slices`,
      );
      const since = new Date();
      const measured = await measure(urls, scenario, connections, timing);
      await scenario.after?.(since);
      results.push({
        scenario: scenario.name,
        connections,
        ...measured,
        goal: scenario.goal ?? null,
        sides: { service: described(plan.service), baseline: described(plan.baseline) },
      });
    }
  }
  return results;
}

/** Steal time above which the table warns that the host was contended. */
const STEAL_WARNING_PERCENT = 5;

function printTable(results: Result[], notes: string[]): void {
  const goal = (r: Result) => (r.goal === null ? '' : `>=${r.goal} ${r.ratio >= r.goal ? 'ok' : 'MISS'}`);
  const header = [
    'scenario',
    'conns',
    'target',
    'req/s',
    'p50 ms',
    'p99 ms',
    'non-2xx',
    'errors',
    'svc/base',
    'steal %',
    'goal',
  ];
  const rows = results.flatMap((r) =>
    [
      [
        r.scenario,
        r.connections,
        r.sides.service.label,
        r.service.requestsPerSecond,
        r.service.p50Ms,
        r.service.p99Ms,
        r.service.non2xx,
        r.service.errors,
        r.ratio,
        r.stealPercent ?? 'n/a',
        goal(r),
      ],
      [
        '',
        '',
        r.sides.baseline.label,
        r.baseline.requestsPerSecond,
        r.baseline.p50Ms,
        r.baseline.p99Ms,
        r.baseline.non2xx,
        r.baseline.errors,
        '',
        '',
        '',
      ],
    ].map((row) => row.map(String)),
  );
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((row) => row[c].length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, c) => (c < 3 || c === 10 ? cell.padEnd(widths[c]) : cell.padStart(widths[c])))
      .join('  ')
      .trimEnd();
  const contended = results.some((r) => (r.stealPercent ?? 0) > STEAL_WARNING_PERCENT)
    ? [
        `steal % above ${STEAL_WARNING_PERCENT}: other guests of this host took CPU time during those measurements; their ratios vary from run to run`,
      ]
    : [];
  console.log(
    [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line), ...notes, ...contended].join('\n'),
  );
}

/** The import runs before the service starts: the embedded store admits one process at a time. */
async function measureImport(config: Config, env: NodeJS.ProcessEnv): Promise<ImportResult[]> {
  console.error(`${IMPORT_SCENARIO}: generating the file and importing it in a process of its own`);
  const result = await benchImport(config, env, tmp);
  console.log(
    `${result.scenario} (${result.fileMb} MB, ${result.database}): ${result.seconds} s, ${result.claimsPerSecond.toLocaleString('en-US')} claims/s, peak RSS ${result.peakRssMb} MB (goal: under 60 s and 300 MB)`,
  );
  return [result];
}

function writeReport(config: Config, results: Result[], notes: string[], imports: ImportResult[] = []): void {
  mkdirSync(join(root, '.bench'), { recursive: true });
  const report = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    database: config.databaseUrl ? 'postgres' : 'pglite',
    durationSeconds: timing.duration,
    warmupSeconds: timing.warmup,
    results,
    imports,
    notes,
  };
  writeFileSync(join(root, '.bench', 'results.json'), `${JSON.stringify(report, null, 2)}\n`);
  console.error('results written to .bench/results.json');
}

/** The non-2xx answers by status and error code, most frequent first. */
function causes(refusals: Record<string, number>): string {
  const counted = Object.entries(refusals).sort(([, a], [, b]) => b - a);
  return counted.length === 0 ? '' : `; by status and error code: ${counted.map(([r, n]) => `${n} × ${r}`).join(', ')}`;
}

function reportFailures(results: Result[]): void {
  const failures = results.flatMap((r) =>
    (['service', 'baseline'] as const)
      .filter((t) => r[t].non2xx > 0 || r[t].errors > 0)
      // Named as the table names the side: in the reference row the measured side is the baseline's fast-jwt route.
      .map(
        (t) =>
          `${r.scenario} x${r.connections} ${r.sides[t].label} (${r.sides[t].request}): ${r[t].non2xx} non-2xx, ${r[t].errors} errors (${r[t].timeouts} timeouts), status codes ${JSON.stringify(r[t].statusCodes)}${causes(r[t].refusals)}`,
      ),
  );
  if (failures.length) {
    console.error(
      `\n!!! BENCHMARK INVALID: runs had error responses or connection errors (causes below); the figures above are not meaningful.\n${failures.join('\n')}`,
    );
    process.exitCode = 1;
  }
}

/**
 * PostgreSQL needs a key-encryption key. Without one in the environment, the bench keeps its own in .bench/ (created
 * once): the bench database outlives a run (its seeded agencies are reused), and so must the key of its secrets.
 */
function benchSecretsKey(env: NodeJS.ProcessEnv): { SECRETS_KEY_FILE?: string } {
  if (env.SECRETS_KEY || env.SECRETS_KEY_FILE) return {};
  const path = join(root, '.bench', 'secrets-key');
  ensureKeyFile(path, (message) => console.error(message));
  return { SECRETS_KEY_FILE: path };
}

/** An OTLP/HTTP collector that accepts every export and keeps nothing: what tracing costs the service, not a collector. */
async function noopCollector(): Promise<{ url: string; server: HttpServer }> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/**
 * The service with metrics off, or with tracing on, beside the one as shipped. On the embedded store, which admits one
 * process, each gets a copy of the prepared data directory and its key file.
 */
async function startVariant(
  server: 'service-metrics-off' | 'service-tracing' | 'service-tracing-ratio',
  env: NodeJS.ProcessEnv,
  collectorUrl: () => Promise<string>,
): Promise<string> {
  const tracing = async () => ({
    OTEL_EXPORTER_OTLP_ENDPOINT: await collectorUrl(),
    OTEL_SERVICE_NAME: 'extension-api-bench',
  });
  const variant =
    server === 'service-metrics-off'
      ? { METRICS: 'off' }
      : server === 'service-tracing'
        ? await tracing()
        : { ...(await tracing()), OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' };
  let dataDir = env.DATA_DIR!;
  if (!env.DATABASE_URL) {
    dataDir = `${env.DATA_DIR}-${server}`;
    cpSync(env.DATA_DIR!, dataDir, { recursive: true });
    if (existsSync(`${env.DATA_DIR}.secrets-key`))
      copyFileSync(`${env.DATA_DIR}.secrets-key`, `${dataDir}.secrets-key`);
  }
  return start(server, npmStartArgs(), { ...env, ...variant, DATA_DIR: dataDir });
}

async function main() {
  // BENCH_DATABASE_URL runs the service on PostgreSQL; otherwise on a fresh embedded store.
  const {
    DATABASE_URL: _ignored,
    BENCH_DATABASE_URL: databaseUrl,
    BENCH_POOLED_DATABASE_URL: _pooled,
    DATABASE_POOLER: _pooler,
    ...rest
  } = process.env;
  const env = {
    ...rest,
    HOST: '127.0.0.1',
    DATA_DIR: join(tmp, 'data'),
    LOG_LEVEL: 'warn',
    TOKEN_ISSUER: 'http://bench.invalid',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl, ...benchSecretsKey(rest) } : {}),
  };
  const config = loadConfig(env);
  const selection = select(databaseUrl);
  const imported = selection.eraImport ? await measureImport(config, env) : [];
  if (selection.gateway.length + selection.clinical.length === 0) {
    if (imported.length > 0) writeReport(config, [], selection.notes, imported);
    console.log(selection.notes.join('\n'));
    return;
  }
  console.error(`preparing integrations and tokens on ${databaseUrl ? 'PostgreSQL' : 'the embedded store'}`);
  const prepared = await prepareData(config, selection);

  const urls: Partial<Record<Server, string>> = {};
  // The variants copy the data directory before the service opens (and locks) it.
  let collector: Awaited<ReturnType<typeof noopCollector>> | undefined;
  const needed = new Set(
    (await buildScenarios(config, { ...selection, clinical: [] }, prepared, '')).flatMap((scenario) =>
      Object.values(sides(scenario)).map((side) => side.server),
    ),
  );
  for (const server of ['service-metrics-off', 'service-tracing', 'service-tracing-ratio'] as const) {
    if (needed.has(server))
      urls[server] = await startVariant(server, env, async () => (collector ??= await noopCollector()).url);
  }
  cleanupCollector = () => collector?.server.close();
  const pooledUrl = process.env.BENCH_POOLED_DATABASE_URL;
  if (pooledUrl && selection.clinical.some(isPooled))
    urls['service-pooled'] = await start('service-pooled', npmStartArgs(), {
      ...env,
      DATABASE_URL: pooledUrl,
      DATABASE_POOLER: 'transaction',
    });
  urls.service = await start('service', npmStartArgs(), env);
  for (const [server, url] of Object.entries(urls)) await untilAdmitting(server, url);
  const { runnable, routes } = await checkService(
    urls.service,
    await buildScenarios(config, selection, prepared, urls.service),
    selection.notes,
  );
  await checkVariants(urls, runnable);
  const baselineFile = join(tmp, 'baseline.json');
  writeFileSync(
    baselineFile,
    JSON.stringify(baselineConfig(config, routes, urls.service, selection.clinical.length > 0)),
  );
  urls.baseline = await start('baseline', ['--import', 'tsx', 'scripts/bench-baseline.ts', baselineFile], {
    ...rest,
    LOG_LEVEL: 'silent',
  });
  await checkBaseline(urls.baseline, runnable);

  const results = await measureAll(urls, runnable);
  printTable(results, selection.notes);
  writeReport(config, results, selection.notes, imported);
  reportFailures(results);
}

try {
  await main();
} catch (err) {
  console.error(`\n!!! BENCHMARK FAILED: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
