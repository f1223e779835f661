/**
 * Load benchmark: the real service against a bare Fastify baseline serving the same bytes, both in
 * child processes on loopback. Results are ratios (service / baseline) because absolute numbers
 * depend on the machine. Usage: [BENCH_DATABASE_URL=postgres://…] npm run bench -- [--quick] [--duration S] [--connections 10,50]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import type { BaselineRoute } from './bench-baseline.js';
import { prepareBenchIdentity, type BenchIdentity } from './bench-identity.js';

type Method = NonNullable<autocannon.Options['method']>;
type Headers = Record<string, string>;

interface Scenario {
  name: string;
  method?: Method;
  path: string;
  headers?: Headers;
  body?: string;
  /** Each request carries the next of these tokens instead of one reused token. */
  rotatingTokens?: string[];
}

/** The same bytes from the bare baseline; the service goes through the whole gateway (JWT, access, limits, metering). */
function scenariosFor(identity: BenchIdentity): Scenario[] {
  const auth = { authorization: `Bearer ${identity.token}` };
  return [
    { name: 'health, reused token', path: '/api/v1/ext/health', headers: auth },
    { name: 'health, fresh token each request', path: '/api/v1/ext/health', rotatingTokens: identity.freshTokens },
    { name: 'catalog, reused token', path: '/api/v1/ext/catalog', headers: auth },
    {
      name: 'task create, idempotent replay',
      method: 'POST',
      path: '/api/v1/ext/tasks',
      headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': 'bench-replay-0001' },
      body: JSON.stringify({ title: 'Benchmark replay', priority: 'normal' }),
    },
  ];
}

interface Request { method: Method; path: string; headers: Headers; body?: string; rotatingTokens?: string[] }
type Target = 'service' | 'baseline';

interface Tally { requests: number; seconds: number; latencies: number[]; non2xx: number; errors: number; timeouts: number; statusCodes: Record<string, number> }

const root = fileURLToPath(new URL('..', import.meta.url));
const { values: args } = parseArgs({
  options: { connections: { type: 'string', default: '10' }, duration: { type: 'string' }, quick: { type: 'boolean', default: false } },
});
const connectionCounts = args.connections.split(',').map(Number);
const duration = args.duration !== undefined ? Number(args.duration) : args.quick ? 3 : 10;
const warmup = args.quick ? 1 : 2;
if (!connectionCounts.every((c) => Number.isInteger(c) && c > 0)) throw new Error(`--connections must be positive integers, got "${args.connections}"`);
if (!(duration > 0)) throw new Error(`--duration must be a positive number of seconds, got "${args.duration}"`);

const tmp = mkdtempSync(join(tmpdir(), 'bench-'));
const children: ChildProcess[] = [];

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().once('error', reject).listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function start(name: string, script: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const port = await freePort();
  // Child logs go to stderr so stdout carries only the table.
  const child = spawn(process.execPath, ['--import', 'tsx', ...script], { cwd: root, env: { ...env, PORT: String(port) }, stdio: ['ignore', 2, 2] });
  children.push(child);
  const url = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(200)) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}) before answering /livez`);
    if (await fetch(`${url}/livez`).then((r) => r.ok, () => false)) return url;
  }
  throw new Error(`${name} did not answer ${url}/livez within 60 s`);
}

async function stop(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  if ((await Promise.race([exited, sleep(5_000, 'timeout')])) === 'timeout') child.kill('SIGKILL');
}

let cleaning: Promise<void> | undefined;
const cleanup = () =>
  (cleaning ??= Promise.all(children.map(stop)).then(() => rmSync(tmp, { recursive: true, force: true })));
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void cleanup().finally(() => process.exit(130)));
}

// autocannon stops only at a sample tick: a short interval lets fractional durations (slices of --quick) end on time.
const SAMPLE_MS = 100;

function load(url: string, request: Request, connections: number, seconds: number, tally?: Tally): Promise<void> {
  return new Promise((resolve, reject) => {
    let next = 0;
    const tokens = request.rotatingTokens;
    const rotate = tokens && [{ method: request.method, path: request.path, setupRequest: (req: autocannon.Request) => ({ ...req, headers: { ...req.headers, authorization: `Bearer ${tokens[next++ % tokens.length]}` } }) }];
    const options = { url: url + request.path, method: request.method, headers: request.headers, body: request.body, connections, duration: seconds, sampleInt: SAMPLE_MS, ...(rotate ? { requests: rotate } : {}) };
    const instance = autocannon(options, (err, result) => {
      if (err) return reject(err);
      if (tally) {
        tally.requests += result.requests.total;
        tally.seconds += result.duration;
        tally.non2xx += result.non2xx;
        tally.errors += result.errors;
        tally.timeouts += result.timeouts;
        for (const [code, { count = 0 }] of Object.entries(result.statusCodeStats ?? {})) {
          tally.statusCodes[code] = (tally.statusCodes[code] ?? 0) + count;
        }
      }
      resolve();
    });
    // Latencies are kept per response so percentiles stay exact across the alternating slices.
    if (tally) instance.on('response', (_client, _status, _bytes, ms) => tally.latencies.push(ms));
  });
}

function summarize(t: Tally) {
  const sorted = Float64Array.from(t.latencies).sort();
  const pct = (q: number) => (sorted.length ? sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] : NaN);
  const round = (n: number, d: number) => Math.round(n * 10 ** d) / 10 ** d;
  return {
    requestsPerSecond: round(t.requests / t.seconds, 1),
    p50Ms: round(pct(0.5), 3),
    p99Ms: round(pct(0.99), 3),
    requests: t.requests,
    seconds: round(t.seconds, 2),
    non2xx: t.non2xx,
    errors: t.errors,
    timeouts: t.timeouts,
    statusCodes: t.statusCodes,
  };
}

/** More than the 10,000 verified tokens the authenticator remembers, so the rotation never hits its cache. */
const FRESH_TOKENS = 12_000;

async function main() {
  // BENCH_DATABASE_URL runs the service on PostgreSQL; otherwise on a fresh embedded store.
  const { DATABASE_URL: _ignored, BENCH_DATABASE_URL: databaseUrl, ...rest } = process.env;
  const env = { ...rest, HOST: '127.0.0.1', DATA_DIR: join(tmp, 'data'), LOG_LEVEL: 'warn', TOKEN_ISSUER: 'http://bench.invalid', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) };
  console.error(`preparing an integration and ${FRESH_TOKENS} tokens on ${databaseUrl ? 'PostgreSQL' : 'the embedded store'}`);
  const scenarios = scenariosFor(await prepareBenchIdentity(env, FRESH_TOKENS));
  const urls = {} as Record<Target, string>;
  urls.service = await start('service', ['src/server.ts'], env);

  const requests: Request[] = [];
  const responseBytes: number[] = [];
  const routes: BaselineRoute[] = [];
  for (const scenario of scenarios) {
    const headers = { ...scenario.headers, ...(scenario.rotatingTokens ? { authorization: `Bearer ${scenario.rotatingTokens[0]}` } : {}) };
    const request: Request = { method: scenario.method ?? 'GET', path: scenario.path, headers: scenario.headers ?? {}, body: scenario.body, rotatingTokens: scenario.rotatingTokens };
    const response = await fetch(urls.service + request.path, { method: request.method, headers, body: request.body });
    const body = Buffer.from(await response.arrayBuffer());
    if (!response.ok) {
      throw new Error(`${scenario.name}: ${request.method} ${request.path} answered ${response.status}, not 2xx; refusing to benchmark an error:\n${body.toString('utf8').slice(0, 500)}`);
    }
    requests.push(request);
    responseBytes.push(body.length);
    // Scenarios that differ only in how they authenticate share one baseline route.
    if (routes.some((r) => r.method === request.method && r.path === request.path)) continue;
    routes.push({ method: request.method, path: request.path, status: response.status, contentType: response.headers.get('content-type') ?? 'application/octet-stream', bodyBase64: body.toString('base64') });
  }
  const routesFile = join(tmp, 'baseline-routes.json');
  writeFileSync(routesFile, JSON.stringify(routes));
  urls.baseline = await start('baseline', ['scripts/bench-baseline.ts', routesFile], { ...rest, LOG_LEVEL: 'silent' });

  const results = [];
  for (const [i, scenario] of scenarios.entries()) {
    for (const connections of connectionCounts) {
      console.error(`${scenario.name} x${connections}: warm-up ${warmup} s each, then ${duration} s each in alternating slices`);
      const tallies = {} as Record<Target, Tally>;
      for (const target of ['service', 'baseline'] as const) {
        tallies[target] = { requests: 0, seconds: 0, latencies: [], non2xx: 0, errors: 0, timeouts: 0, statusCodes: {} };
        await load(urls[target], requests[i], connections, warmup);
      }
      // ABBA order: drift (thermal, other load) weighs equally on both targets.
      for (const target of ['service', 'baseline', 'baseline', 'service'] as const) {
        await load(urls[target], requests[i], connections, duration / 2, tallies[target]);
      }
      const service = summarize(tallies.service);
      const baseline = summarize(tallies.baseline);
      const ratio = Math.round((service.requestsPerSecond / baseline.requestsPerSecond) * 1000) / 1000;
      results.push({ scenario: scenario.name, method: requests[i].method, path: scenario.path, responseBytes: responseBytes[i], connections, service, baseline, ratio });
    }
  }

  const header = ['scenario', 'conns', 'target', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors', 'svc/base'];
  const rows = results.flatMap((r) => [
    [r.scenario, r.connections, 'service', r.service.requestsPerSecond, r.service.p50Ms, r.service.p99Ms, r.service.non2xx, r.service.errors, r.ratio],
    ['', '', 'baseline', r.baseline.requestsPerSecond, r.baseline.p50Ms, r.baseline.p99Ms, r.baseline.non2xx, r.baseline.errors, ''],
  ].map((row) => row.map(String)));
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((row) => row[c].length)));
  const line = (cells: string[]) => cells.map((cell, c) => (c < 3 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ');
  console.log([line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n'));

  mkdirSync(join(root, '.bench'), { recursive: true });
  const report = { date: new Date().toISOString(), node: process.version, cpus: cpus().length, database: databaseUrl ? 'postgres' : 'pglite', durationSeconds: duration, warmupSeconds: warmup, results };
  writeFileSync(join(root, '.bench', 'results.json'), JSON.stringify(report, null, 2) + '\n');
  console.error('results written to .bench/results.json');

  const failures = results.flatMap((r) =>
    (['service', 'baseline'] as const)
      .filter((t) => r[t].non2xx > 0 || r[t].errors > 0)
      .map((t) => `${r.scenario} x${r.connections} ${t}: ${r[t].non2xx} non-2xx, ${r[t].errors} errors (${r[t].timeouts} timeouts), status codes ${JSON.stringify(r[t].statusCodes)}`),
  );
  if (failures.length) {
    console.error(`\n!!! BENCHMARK INVALID: runs had error responses or connection errors; the figures above are not meaningful.\n${failures.join('\n')}`);
    process.exitCode = 1;
  }
}

try {
  await main();
} catch (err) {
  console.error(`\n!!! BENCHMARK FAILED: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
