import t from 'tap';
import Fastify from 'fastify';
import { installErrorHandler } from '../../src/gateway/http/error-handler.js';
import { errorShapes } from '../../src/generated/contract.js';

const app = Fastify({ logger: false });
installErrorHandler(app);
const failures: Record<string, () => Error> = {
  'pool-wait': () => new Error('timeout exceeded when trying to connect'),
  'connection-lost': () => Object.assign(new Error('terminating connection'), { code: '08006' }),
  'too-many-connections': () => Object.assign(new Error('sorry, too many clients already'), { code: '53300' }),
  'statement-timeout': () =>
    Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }),
  bug: () => new TypeError('undefined is not a function'),
};
for (const [name, fail] of Object.entries(failures))
  app.get(`/${name}`, async () => {
    throw fail();
  });
t.teardown(() => app.close());

t.test('database trouble that passes is a retryable 503 or 504, never a 500', async (t) => {
  for (const name of ['pool-wait', 'connection-lost', 'too-many-connections']) {
    const res = await app.inject({ url: `/${name}` });
    t.equal(res.statusCode, 503, name);
    t.equal(res.headers['retry-after'], '1');
    t.match(res.json().error, { code: 'PLATFORM_SERVICE_UNAVAILABLE', retryable: true });
    t.ok(errorShapes.ExternalPlatformError(res.json()), 'in the contract shape');
  }
  const slow = await app.inject({ url: '/statement-timeout' });
  t.equal(slow.statusCode, 504);
  t.equal(slow.json().error.code, 'PLATFORM_TIMEOUT');
});

t.test('anything else is a masked 500', async (t) => {
  const res = await app.inject({ url: '/bug' });
  t.equal(res.statusCode, 500);
  t.equal(res.json().error.code, 'PLATFORM_INTERNAL_ERROR');
  t.notMatch(res.body, /undefined is not a function/);
});
