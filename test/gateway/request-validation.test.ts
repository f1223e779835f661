import t from 'tap';
import { buildSignedInApp } from '../helpers/app.js';

const api = await buildSignedInApp({ config: { bodyLimitBytes: 2048 } });
const json = { 'content-type': 'application/json' };
const command = { ...json, 'idempotency-key': 'key-12345678' };

t.test('bad query parameters get a 400 ApiError listing each problem', async (t) => {
  const res = await api.request({ method: 'GET', url: '/api/v1/ext/patients?limit=abc&offset=-1&colour=blue' });
  t.equal(res.statusCode, 400);
  const body = res.json();
  t.equal(body.code, 'PLATFORM_INVALID_REQUEST');
  t.equal(body.error, 'invalid_request');
  t.ok(body.request_id);
  t.same(body.issues.map((i: { location: string; path: string }) => `${i.location}:${i.path}`).sort(), [
    'query:colour',
    'query:limit',
    'query:offset',
  ]);
});

t.test('a limit above the maximum is refused, not capped', async (t) => {
  const res = await api.request({ method: 'GET', url: '/api/v1/ext/patients?limit=201' });
  t.equal(res.statusCode, 400);
  t.match(res.json().issues, [{ location: 'query', path: 'limit', keyword: 'maximum' }]);
});

t.test('query values are converted to their declared type, not loosely', async (t) => {
  for (const url of [
    '/api/v1/ext/patients?limit=1.5',
    '/api/v1/ext/patients?limit=10&limit=20',
    '/api/v1/ext/patients?updated_since=yesterday',
  ]) {
    const res = await api.request({ method: 'GET', url });
    t.equal(res.statusCode, 400, url);
  }
});

t.test('bodies are not coerced and unknown fields are refused where the contract forbids them', async (t) => {
  const res = await api.request({
    method: 'POST',
    url: '/api/v1/ext/tasks',
    headers: command,
    payload: { title: 42, colour: 'blue', priority: 'asap' },
  });
  t.equal(res.statusCode, 400);
  const paths = res
    .json()
    .issues.map((i: { path: string }) => i.path)
    .sort();
  t.same(paths, ['/colour', '/priority', '/title']);
});

t.test('a missing required body field is named', async (t) => {
  const res = await api.request({
    method: 'POST',
    url: '/api/v1/ext/referrals',
    headers: command,
    payload: { patient_name: 'Ada Lovelace' },
  });
  t.equal(res.statusCode, 400);
  t.match(res.json().issues, [{ location: 'body', path: '/service_line', keyword: 'required' }]);
});

t.test('commands need a well-formed idempotency key', async (t) => {
  for (const key of [undefined, 'short', 'has spaces in it', 'x'.repeat(129)]) {
    const headers = key === undefined ? json : { ...json, 'idempotency-key': key };
    const res = await api.request({
      method: 'POST',
      url: '/api/v1/ext/tasks',
      headers,
      payload: { title: 'Call back' },
    });
    t.equal(res.statusCode, 400, `key ${key}`);
    t.equal(res.json().code, 'PLATFORM_INVALID_IDEMPOTENCY_KEY');
  }
});

t.test('malformed JSON, wrong content type and oversized bodies', async (t) => {
  const broken = await api.request({
    method: 'POST',
    url: '/api/v1/ext/tasks',
    headers: command,
    payload: '{"title": ',
  });
  t.equal(broken.statusCode, 400);
  t.equal(broken.json().code, 'PLATFORM_INVALID_REQUEST');

  const text = await api.request({
    method: 'POST',
    url: '/api/v1/ext/tasks',
    headers: { ...command, 'content-type': 'text/plain' },
    payload: 'hello',
  });
  t.equal(text.statusCode, 415);

  const form = await api.request({
    method: 'POST',
    url: '/api/v1/ext/tasks',
    headers: { ...command, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'title=x',
  });
  t.equal(form.statusCode, 415, 'form bodies only where the contract lists them');

  const big = await api.request({
    method: 'POST',
    url: '/api/v1/ext/tasks',
    headers: command,
    payload: { title: 'x', description: 'y'.repeat(4096) },
  });
  t.equal(big.statusCode, 413);
  t.equal(big.json().error, 'payload_too_large');

  const proto = await api.request({
    method: 'POST',
    url: '/api/v1/ext/tasks',
    headers: command,
    payload: '{"title":"x","__proto__":{"admin":true}}',
  });
  t.equal(proto.statusCode, 400, 'prototype poisoning is refused');
});

t.test('unknown paths get 404 and undocumented methods 405 with Allow', async (t) => {
  const missing = await api.request({ method: 'GET', url: '/api/v1/ext/nothing-here' });
  t.equal(missing.statusCode, 404);
  t.equal(missing.json().code, 'PLATFORM_RESOURCE_NOT_FOUND');

  const proposals = await api.request({ method: 'POST', url: '/api/v1/ext/proposals', headers: command, payload: {} });
  t.equal(proposals.statusCode, 404, 'the REST partition has no /proposals endpoint');

  const wrong = await api.request({
    method: 'DELETE',
    url: '/api/v1/ext/tasks/task_1',
    headers: { 'idempotency-key': 'key-12345678' },
  });
  t.equal(wrong.statusCode, 405);
  t.equal(wrong.headers.allow, 'GET, PATCH');
});

t.test('a JSON content type with an empty body counts as no body', async (t) => {
  const revoke = await api.request({ method: 'DELETE', url: '/api/v1/ext/query-tokens/qtk_1', headers: command });
  t.equal(revoke.statusCode, 404, 'reaches the operation');
  const create = await api.request({ method: 'POST', url: '/api/v1/ext/tasks', headers: command });
  t.equal(create.statusCode, 400);
  t.match(create.json().issues, [{ location: 'body', path: '' }]);
});

t.test('errors never leak a stack trace', async (t) => {
  const res = await api.request({ method: 'POST', url: '/api/v1/ext/tasks', headers: command, payload: '[' });
  t.notMatch(res.body, /at .*\.(ts|js):\d+/);
});
