/** What a benchmark scenario is, the gateway scenarios, and the --scenarios filter. */
import type autocannon from 'autocannon';
import type { BenchTokens } from './bench-credentials.js';
import type { BenchIdentity } from './bench-identity.js';

type Method = NonNullable<autocannon.Options['method']>;
export type Headers = Record<string, string>;
/** The two sides of a measurement: the measured one and the one it is divided by. */
export type Target = 'service' | 'baseline';
/**
 * The servers a side is sent to: the service as it ships (metrics on), the baseline, and the service with metrics off
 * or with tracing on (started only when a selected scenario needs them).
 */
export type Server =
  | 'service'
  | 'baseline'
  | 'service-metrics-off'
  | 'service-tracing'
  | 'service-tracing-ratio'
  | 'service-pooled';

/** Rewrites each request before it is sent (autocannon's setupRequest), e.g. a fresh key or token. */
export type Setup = (request: autocannon.Request) => autocannon.Request;

export interface Request {
  method: Method;
  path: string;
  headers: Headers;
  body?: string;
  /** The bearer token it carries (the first of them), renewed before a slice that would outlive it (headersOf). */
  tokens?: BenchTokens;
  /**
   * Makes the Setup of one side. Each side of a scenario gets its own, once (see sides()): a rotation of fresh tokens
   * advances only with that side's requests, so what the other side sent between slices cannot bring the service
   * back a token it still remembers.
   */
  setup?: () => Setup;
}

export interface Scenario {
  name: string;
  service: Request;
  /** A live baseline route doing the least equivalent work (bench-baseline-clinical.ts); it replaces the pairing's baseline side. */
  baseline?: Request;
  /**
   * Which two sides are measured (measured/divided by), each answering the service's request:
   * - `service/bare` (default): the whole gateway against the bytes the service answered, served bare;
   * - `service/fast-jwt`: the same bytes served after fast-jwt's cached verify of the same token alone;
   * - `fast-jwt/bare`: no service (it only records the bytes), the reference the gateway's goal was set from;
   * - `pooled/service`: the service on PostgreSQL through PgBouncer (BENCH_POOLED_DATABASE_URL) against it direct.
   */
  pairing?: Pairing;
  /** Connection counts measured unless --connections says otherwise. */
  connections: number[];
  /** The service/baseline requests-per-second ratio this scenario should reach. */
  goal?: number;
  /** Undoes what a measurement wrote since `since`, so each measurement and the scenarios after it start alike. */
  after?: (since: Date) => Promise<void>;
}

export interface ScenarioSpec<Fixture> {
  name: string;
  build(fixture: Fixture): Omit<Scenario, 'name'> | Promise<Omit<Scenario, 'name'>>;
}

export async function buildScenario<F>(spec: ScenarioSpec<F>, fixture: F): Promise<Scenario> {
  return { name: spec.name, ...(await spec.build(fixture)) };
}

/** The headers a request is sent with now: its own, and its tokens' current one. */
export function headersOf(request: Request): Headers {
  return request.tokens ? { ...request.headers, ...bearer(request.tokens.token) } : request.headers;
}

/** The request a setup would send first: what the pre-flight check sends. */
export function firstRequest(request: Request): Request {
  const headers = headersOf(request);
  if (!request.setup) return { ...request, headers };
  const sent = request.setup()({
    method: request.method,
    path: request.path,
    headers: { ...headers },
    body: request.body,
  });
  return {
    method: request.method,
    path: sent.path ?? request.path,
    headers: sent.headers as Headers,
    body: sent.body?.toString(),
  };
}

/** Each request with the next of `tokens`, as they are now (renewed ones included). */
function rotatingTokens(tokens: BenchTokens): () => Setup {
  return () => {
    let next = 0;
    return (request) => ({
      ...request,
      headers: { ...request.headers, ...bearer(tokens.all[next++ % tokens.all.length]) },
    });
  };
}

const GATEWAY_CONNECTIONS = [10];

/** Where the baseline serves the service's recorded bytes behind fast-jwt's cached verify alone (bench-baseline.ts). */
export const FAST_JWT_PREFIX = '/baseline/fast-jwt';

/** A side a pairing names; a scenario's live `baseline` request is one more kind. */
type PairedSide = 'service' | 'bare' | 'fast-jwt' | 'metrics-off' | 'tracing' | 'tracing-10' | 'pooled';
type Pairing =
  | 'service/bare'
  | 'service/fast-jwt'
  | 'fast-jwt/bare'
  | 'metrics-off/bare'
  | 'tracing/bare'
  | 'service/metrics-off'
  | 'tracing/service'
  | 'tracing-10/service'
  | 'pooled/service';

/** What one side of a measurement sends, to which server, and how the table names it. */
export interface Side {
  server: Server;
  request: Request;
  /** This side's own rewriter, made from request.setup. */
  setupRequest?: Setup;
  label: PairedSide | 'baseline';
}

const side = (server: Server, request: Request, label: Side['label']): Side => ({
  server,
  request,
  label,
  setupRequest: request.setup?.(),
});

const planned = new WeakMap<Scenario, Record<Target, Side>>();

/**
 * Both sides of a scenario: the measured one (`service`) and the one it is divided by (`baseline`). Made once per
 * scenario, so each side's rewriter keeps its place across warm-ups, slices and connection counts.
 */
export function sides(scenario: Scenario): Record<Target, Side> {
  let plan = planned.get(scenario);
  if (!plan) planned.set(scenario, (plan = planOf(scenario)));
  return plan;
}

function planOf(scenario: Scenario): Record<Target, Side> {
  const { service: request, baseline: live, pairing = 'service/bare' } = scenario;
  const paired = {
    service: () => side('service', request, 'service'),
    bare: () => side('baseline', request, 'bare'),
    'fast-jwt': () => side('baseline', { ...request, path: FAST_JWT_PREFIX + request.path }, 'fast-jwt'),
    'metrics-off': () => side('service-metrics-off', request, 'metrics-off'),
    tracing: () => side('service-tracing', request, 'tracing'),
    'tracing-10': () => side('service-tracing-ratio', request, 'tracing-10'),
    pooled: () => side('service-pooled', request, 'pooled'),
  } satisfies Record<PairedSide, () => Side>;
  const [measured, against] = pairing.split('/') as [PairedSide, PairedSide];
  return { service: paired[measured](), baseline: live ? side('baseline', live, 'baseline') : paired[against]() };
}

function get(path: string, tokens: BenchTokens, setup?: () => Setup, goal?: number): Omit<Scenario, 'name'> {
  return { service: { method: 'GET', path, headers: {}, tokens, setup }, connections: GATEWAY_CONNECTIONS, goal };
}

/** Against the same bytes from the bare baseline; the service goes through the whole gateway (JWT, access, limits, metering). */
export const GATEWAY_SPECS: ScenarioSpec<BenchIdentity>[] = [
  // Issue 3's target: the whole gateway keeps 0.6 of bare Fastify with a reused token.
  { name: 'health, reused token', build: (id) => get('/api/v1/ext/health', id.token, undefined, 0.6) },
  // The reference point: the whole gateway against fast-jwt's cached verify alone, serving the same bytes.
  {
    name: 'health, reused token, against a fast-jwt verify alone',
    build: (id) => ({ ...get('/api/v1/ext/health', id.token), pairing: 'service/fast-jwt' }),
  },
  // The goal's premise, in the same run: on the machine fast-jwt's cached verify alone kept about 0.69 of bare.
  {
    name: 'reference: fast-jwt verify alone against bare, reused token',
    build: (id) => ({ ...get('/api/v1/ext/health', id.token), pairing: 'fast-jwt/bare' }),
  },
  {
    name: 'health, fresh token each request',
    build: (id) => get('/api/v1/ext/health', id.freshTokens, rotatingTokens(id.freshTokens)),
  },
  { name: 'catalog, reused token', build: (id) => get('/api/v1/ext/catalog', id.token) },
  // Issue 34: what metrics and tracing cost a warm call, each against bare and against each other, in the same run.
  {
    name: 'observability: health, metrics on (as shipped)',
    build: (id) => get('/api/v1/ext/health', id.token),
  },
  {
    name: 'observability: health, metrics off',
    build: (id) => ({ ...get('/api/v1/ext/health', id.token), pairing: 'metrics-off/bare' }),
  },
  {
    name: 'observability: health, tracing on (OTLP to a no-op collector)',
    build: (id) => ({ ...get('/api/v1/ext/health', id.token), pairing: 'tracing/bare' }),
  },
  {
    name: 'observability: metrics on against metrics off, health',
    build: (id) => ({
      ...get('/api/v1/ext/health', id.token, undefined, 0.95),
      pairing: 'service/metrics-off',
    }),
  },
  {
    name: 'observability: tracing on against metrics on, health',
    build: (id) => ({ ...get('/api/v1/ext/health', id.token), pairing: 'tracing/service' }),
  },
  // The sampler a deployment would run: a caller's decision kept, else one call in ten traced.
  {
    name: 'observability: tracing at a parent-based 10 % ratio against metrics on, health',
    build: (id) => ({ ...get('/api/v1/ext/health', id.token), pairing: 'tracing-10/service' }),
  },
  {
    name: 'task create, idempotent replay',
    build: (id) => ({
      service: {
        method: 'POST',
        path: '/api/v1/ext/tasks',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'bench-replay-0001' },
        tokens: id.token,
        body: JSON.stringify({ title: 'Benchmark replay', priority: 'normal' }),
      },
      connections: GATEWAY_CONNECTIONS,
    }),
  },
];

export function bearer(token: string): Headers {
  return { authorization: `Bearer ${token}` };
}

/** --scenarios: a comma list of case-insensitive substrings; a scenario runs when its name contains one. */
export function scenarioFilter(option: string | undefined): (name: string) => boolean {
  const parts = (option ?? '')
    .split(',')
    .map((p) => p.trim().toLowerCase())
    .filter(Boolean);
  return (name) => parts.length === 0 || parts.some((p) => name.toLowerCase().includes(p));
}
