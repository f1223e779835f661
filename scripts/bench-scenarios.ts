/** What a benchmark scenario is, the gateway scenarios, and the --scenarios filter. */
import type autocannon from 'autocannon';
import type { BenchIdentity } from './bench-identity.js';

export type Method = NonNullable<autocannon.Options['method']>;
export type Headers = Record<string, string>;
export type Target = 'service' | 'baseline';

/** Rewrites each request before it is sent (autocannon's setupRequest), e.g. a fresh key or token. */
export type Setup = (request: autocannon.Request) => autocannon.Request;

export interface Request {
  method: Method;
  path: string;
  headers: Headers;
  body?: string;
  setup?: Setup;
}

export interface Scenario {
  name: string;
  service: Request;
  /**
   * A live baseline route doing the least equivalent work (bench-baseline-clinical.ts). Absent: the
   * baseline answers the service's own request with the bytes the service answered it, bare or, with
   * `behindFastJwt`, after fast-jwt's cached verify of the same token.
   */
  baseline?: Request;
  behindFastJwt?: boolean;
  /**
   * Measures no service: the baseline's fast-jwt route against its bare route, both on the baseline server, the
   * reference the gateway's goal was set from (the service request only records the bytes both serve).
   */
  fastJwtReference?: boolean;
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

/** The request a setup would send first: what the pre-flight check sends. */
export function firstRequest(request: Request): Request {
  if (!request.setup) return request;
  const sent = request.setup({ method: request.method, path: request.path, headers: { ...request.headers }, body: request.body });
  return { method: request.method, path: sent.path ?? request.path, headers: sent.headers as Headers, body: sent.body?.toString() };
}

function rotatingTokens(tokens: string[]): Setup {
  let next = 0;
  return (request) => ({ ...request, headers: { ...request.headers, authorization: `Bearer ${tokens[next++ % tokens.length]}` } });
}

const GATEWAY_CONNECTIONS = [10];

/** Where the baseline serves the service's recorded bytes behind fast-jwt's cached verify alone (bench-baseline.ts). */
export const FAST_JWT_PREFIX = '/baseline/fast-jwt';

/** What one side of a measurement sends, to which server, and how the table names it. */
export interface Side {
  server: Target;
  request: Request;
  label: 'service' | 'baseline' | 'bare' | 'fast-jwt';
}

/** Both sides of a scenario: the measured one (`service`) and the one it is divided by (`baseline`). */
export function sides(scenario: Scenario): Record<Target, Side> {
  const bare: Side = { server: 'baseline', request: scenario.service, label: 'bare' };
  const fastJwt: Side = { server: 'baseline', request: { ...scenario.service, path: FAST_JWT_PREFIX + scenario.service.path }, label: 'fast-jwt' };
  if (scenario.fastJwtReference) return { service: fastJwt, baseline: bare };
  const live: Side | undefined = scenario.baseline && { server: 'baseline', request: scenario.baseline, label: 'baseline' };
  return { service: { server: 'service', request: scenario.service, label: 'service' }, baseline: live ?? (scenario.behindFastJwt ? fastJwt : bare) };
}

function get(path: string, headers: Headers, setup?: Setup, goal?: number): Omit<Scenario, 'name'> {
  return { service: { method: 'GET', path, headers, setup }, connections: GATEWAY_CONNECTIONS, goal };
}

/** Against the same bytes from the bare baseline; the service goes through the whole gateway (JWT, access, limits, metering). */
export const GATEWAY_SPECS: ScenarioSpec<BenchIdentity>[] = [
  // Issue 3's target: the whole gateway keeps 0.6 of bare Fastify with a reused token.
  { name: 'health, reused token', build: (id) => get('/api/v1/ext/health', bearer(id.token), undefined, 0.6) },
  // The reference point: the whole gateway against fast-jwt's cached verify alone, serving the same bytes.
  {
    name: 'health, reused token, against a fast-jwt verify alone',
    build: (id) => ({ ...get('/api/v1/ext/health', bearer(id.token)), behindFastJwt: true }),
  },
  // The goal's premise, in the same run: on the machine fast-jwt's cached verify alone kept about 0.69 of bare.
  { name: 'reference: fast-jwt verify alone against bare, reused token', build: (id) => ({ ...get('/api/v1/ext/health', bearer(id.token)), fastJwtReference: true }) },
  { name: 'health, fresh token each request', build: (id) => get('/api/v1/ext/health', {}, rotatingTokens(id.freshTokens)) },
  { name: 'catalog, reused token', build: (id) => get('/api/v1/ext/catalog', bearer(id.token)) },
  {
    name: 'task create, idempotent replay',
    build: (id) => ({
      service: {
        method: 'POST',
        path: '/api/v1/ext/tasks',
        headers: { ...bearer(id.token), 'content-type': 'application/json', 'idempotency-key': 'bench-replay-0001' },
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
  const parts = (option ?? '').split(',').map((p) => p.trim().toLowerCase()).filter(Boolean);
  return (name) => parts.length === 0 || parts.some((p) => name.toLowerCase().includes(p));
}
