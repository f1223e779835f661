import t from 'tap';
import { BenchTokens } from '../../scripts/bench-credentials.js';
import {
  buildScenario,
  FAST_JWT_PREFIX,
  GATEWAY_SPECS,
  sides,
  type Scenario,
  type Side,
} from '../../scripts/bench-scenarios.js';

/** The bench divides one side by the other: a pairing that measured the wrong pair would print a plausible, wrong ratio. */
const health = { method: 'GET', path: '/api/v1/ext/health', headers: { authorization: 'Bearer t' } } as const;
const scenario = (extra: Partial<Scenario>): Scenario => ({ name: 'x', service: health, connections: [10], ...extra });
const summary = (s: Scenario) =>
  Object.values(sides(s)).map(({ server, request, label }) => `${label}@${server} ${request.path}`);

t.test('the default pairing measures the service against the same request served bare', async (t) => {
  t.same(summary(scenario({})), ['service@service /api/v1/ext/health', 'bare@baseline /api/v1/ext/health']);
});

t.test('service/fast-jwt puts the baseline side behind the fast-jwt route', async (t) => {
  t.same(summary(scenario({ pairing: 'service/fast-jwt' })), [
    'service@service /api/v1/ext/health',
    `fast-jwt@baseline ${FAST_JWT_PREFIX}/api/v1/ext/health`,
  ]);
});

t.test('fast-jwt/bare measures no service: both sides are on the baseline server', async (t) => {
  t.same(summary(scenario({ pairing: 'fast-jwt/bare' })), [
    `fast-jwt@baseline ${FAST_JWT_PREFIX}/api/v1/ext/health`,
    'bare@baseline /api/v1/ext/health',
  ]);
});

t.test('a live baseline request replaces the recorded-bytes side', async (t) => {
  const live = { method: 'GET', path: '/baseline/patients/1', headers: {} } as const;
  t.same(summary(scenario({ baseline: live })), [
    'service@service /api/v1/ext/health',
    'baseline@baseline /baseline/patients/1',
  ]);
});

const HOUR_MS = 3_600_000;
const tokens = (...list: string[]) =>
  BenchTokens.issue(list.join(), async () => ({ tokens: list, expiresAtMs: Date.now() + HOUR_MS }));

/** The fresh-token scenario, rotating three tokens: what the service receives is the "fresh token" figure. */
async function freshTokenScenario(): Promise<Scenario> {
  const spec = GATEWAY_SPECS.find((s) => s.name === 'health, fresh token each request')!;
  return buildScenario(spec, { token: await tokens('reused'), freshTokens: await tokens('a', 'b', 'c') });
}

const sentToken = (side: Side) => side.setupRequest!({ method: 'GET', path: '/', headers: {} }).headers!.authorization;

t.test(
  'each side rotates its own tokens: the bare side cannot bring the service back a token it still remembers',
  async (t) => {
    const plan = sides(await freshTokenScenario());
    sentToken(plan.baseline);
    sentToken(plan.baseline);
    t.same(
      [sentToken(plan.service), sentToken(plan.service), sentToken(plan.service)],
      ['Bearer a', 'Bearer b', 'Bearer c'],
    );
  },
);

t.test('a side keeps its place in the rotation across measurements of the scenario', async (t) => {
  const scenario = await freshTokenScenario();
  t.equal(sentToken(sides(scenario).service), 'Bearer a');
  t.equal(
    sentToken(sides(scenario).service),
    'Bearer b',
    'not back to the first token, which the service has verified and remembers',
  );
});

t.test('the observability pairings send each side to its own service process', async (t) => {
  t.same(summary(scenario({ pairing: 'metrics-off/bare' })), [
    'metrics-off@service-metrics-off /api/v1/ext/health',
    'bare@baseline /api/v1/ext/health',
  ]);
  t.same(summary(scenario({ pairing: 'tracing/bare' })), [
    'tracing@service-tracing /api/v1/ext/health',
    'bare@baseline /api/v1/ext/health',
  ]);
  t.same(summary(scenario({ pairing: 'service/metrics-off' })), [
    'service@service /api/v1/ext/health',
    'metrics-off@service-metrics-off /api/v1/ext/health',
  ]);
  t.same(summary(scenario({ pairing: 'tracing/service' })), [
    'tracing@service-tracing /api/v1/ext/health',
    'service@service /api/v1/ext/health',
  ]);
});
