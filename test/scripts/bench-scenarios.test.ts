import t from 'tap';
import { FAST_JWT_PREFIX, sides, type Scenario } from '../../scripts/bench-scenarios.js';

/** The bench divides one side by the other: a pairing that measured the wrong pair would print a plausible, wrong ratio. */
const health = { method: 'GET', path: '/api/v1/ext/health', headers: { authorization: 'Bearer t' } } as const;
const scenario = (extra: Partial<Scenario>): Scenario => ({ name: 'x', service: health, connections: [10], ...extra });
const summary = (s: Scenario) => Object.values(sides(s)).map(({ server, request, label }) => `${label}@${server} ${request.path}`);

t.test('the default pairing measures the service against the same request served bare', async (t) => {
  t.same(summary(scenario({})), ['service@service /api/v1/ext/health', 'bare@baseline /api/v1/ext/health']);
});

t.test('service/fast-jwt puts the baseline side behind the fast-jwt route', async (t) => {
  t.same(summary(scenario({ pairing: 'service/fast-jwt' })), ['service@service /api/v1/ext/health', `fast-jwt@baseline ${FAST_JWT_PREFIX}/api/v1/ext/health`]);
});

t.test('fast-jwt/bare measures no service: both sides are on the baseline server', async (t) => {
  t.same(summary(scenario({ pairing: 'fast-jwt/bare' })), [`fast-jwt@baseline ${FAST_JWT_PREFIX}/api/v1/ext/health`, 'bare@baseline /api/v1/ext/health']);
});

t.test('a live baseline request replaces the recorded-bytes side', async (t) => {
  const live = { method: 'GET', path: '/baseline/patients/1', headers: {} } as const;
  t.same(summary(scenario({ baseline: live })), ['service@service /api/v1/ext/health', 'baseline@baseline /baseline/patients/1']);
});
