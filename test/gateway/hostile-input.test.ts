import t, { type Test } from 'tap';
import { buildSignedInApp, type Response } from '../helpers/app.js';

const api = await buildSignedInApp();
const MAX_OFFSET = 100_000;

function assertInvalidRequest(t: Test, res: Response, status: number, issue?: Record<string, string>) {
  t.equal(res.statusCode, status, res.body.slice(0, 300));
  const body = res.json();
  t.equal(body.code, 'PLATFORM_INVALID_REQUEST');
  t.ok(body.request_id, 'ApiError shape');
  if (issue) t.match(body.issues, [issue]);
}

t.test('numbers that are not finite or too large are a 400 naming the parameter, never a 500', async (t) => {
  for (const name of ['limit', 'offset']) {
    for (const value of ['1e400', '-1e400', 'Infinity', '-Infinity', 'NaN', '1e308', '9223372036854775807', '1e21']) {
      const res = await api.request({ method: 'GET', url: `/api/v1/ext/patients?${name}=${value}` });
      assertInvalidRequest(t, res, 400, { location: 'query', path: name });
    }
  }
  const year = await api.request({ method: 'GET', url: '/api/v1/ext/quality/hhvbp/summary?performance_year=1e400' });
  assertInvalidRequest(t, year, 400, { location: 'query', path: 'performance_year' });
});

t.test(`offset has a maximum of ${MAX_OFFSET}: deeper pages continue by cursor`, async (t) => {
  const deepest = await api.request({ method: 'GET', url: `/api/v1/ext/patients?offset=${MAX_OFFSET}` });
  t.equal(deepest.statusCode, 200);
  const beyond = await api.request({ method: 'GET', url: `/api/v1/ext/patients?offset=${MAX_OFFSET + 1}` });
  assertInvalidRequest(t, beyond, 400, { location: 'query', path: 'offset', keyword: 'maximum' });
});
