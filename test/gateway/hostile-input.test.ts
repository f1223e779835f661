import t, { type Test } from 'tap';
import { once } from 'node:events';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { errorShapes } from '../../src/generated/contract.js';
import { buildTestApp, signIn, type Response } from '../helpers/app.js';
import { tokenRequestBody } from '../helpers/identity.js';

/** `anonymous` sends no Authorization header (the token endpoint's client authentication is in the test's hands). */
const anonymous = await buildTestApp();
const api = await signIn(anonymous);
const TOKEN_URL = '/api/v1/oauth/token';
const MAX_DEPTH = 64;
const MAX_OFFSET = 100_000;
const command = (key: string) => ({ 'content-type': 'application/json', 'idempotency-key': key });
let keys = 0;
const freshKey = () => `hostile-${++keys}-${Date.now()}`;
let addresses = 0;
const freshAddress = () => `203.0.113.${++addresses}`;

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

const deepArray = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const deepObject = (depth: number) => `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;
/** A referral body (additional properties allowed) whose `extra` member nests `depth - 1` levels below the body. */
const referralNesting = (nested: string) =>
  `{"service_line":"home_health","patient_name":"Ada Lovelace","extra":${nested}}`;
const depthIssue = { location: 'body', path: '', keyword: 'maxDepth' };

t.test(`bodies nested deeper than ${MAX_DEPTH} levels are a 400 before anything walks them`, async (t) => {
  for (const depth of [5_000, 100_000]) {
    for (const [shape, nested] of [
      ['arrays', deepArray(depth)],
      ['objects', deepObject(depth)],
    ]) {
      const referral = await api.request({
        method: 'POST',
        url: '/api/v1/ext/referrals',
        headers: command(freshKey()),
        payload: referralNesting(nested),
      });
      assertInvalidRequest(t, referral, 400, depthIssue);
      t.match(referral.json().user_message, String(MAX_DEPTH), `${depth} ${shape}: the message names the limit`);
      const token = await anonymous.request({
        method: 'POST',
        url: TOKEN_URL,
        headers: { 'content-type': 'application/json' },
        payload: nested,
        remoteAddress: freshAddress(),
      });
      assertInvalidRequest(t, token, 400, depthIssue);
    }
  }
});

t.test(`a body ${MAX_DEPTH} levels deep is accepted, one more is refused`, async (t) => {
  for (const nest of [deepArray, deepObject]) {
    const atLimit = await api.request({
      method: 'POST',
      url: '/api/v1/ext/referrals',
      headers: command(freshKey()),
      payload: referralNesting(nest(MAX_DEPTH - 1)),
    });
    t.equal(atLimit.statusCode, 200, atLimit.body.slice(0, 300));
    const over = await api.request({
      method: 'POST',
      url: '/api/v1/ext/referrals',
      headers: command(freshKey()),
      payload: referralNesting(nest(MAX_DEPTH)),
    });
    assertInvalidRequest(t, over, 400, depthIssue);
  }
});

t.test('brackets inside strings, escaped quotes and backslashes included, do not count as nesting', async (t) => {
  const description = '\\"[{'.repeat(2_000);
  const res = await api.request({
    method: 'POST',
    url: '/api/v1/ext/tasks',
    headers: command(freshKey()),
    payload: { title: 'Call back', description },
  });
  t.equal(res.statusCode, 200, res.body.slice(0, 300));
  t.equal(res.json().data.description, description);
});

t.test('a charset other than UTF-8 is a 415; UTF-8 in any spelling, or none, is accepted', async (t) => {
  for (const charset of ['utf-7', 'ISO-8859-1', '"utf-16"', 'us-ascii']) {
    const res = await api.request({
      method: 'POST',
      url: '/api/v1/ext/tasks',
      headers: { ...command(freshKey()), 'content-type': `application/json; charset=${charset}` },
      payload: '{"title":"Call back"}',
    });
    assertInvalidRequest(t, res, 415);
    t.equal(res.json().error, 'unsupported_media_type');
  }
  for (const contentType of [
    'application/json',
    'application/json; charset=utf-8',
    'application/json;charset="UTF-8"',
    'Application/JSON; Charset=UTF-8',
  ]) {
    const res = await api.request({
      method: 'POST',
      url: '/api/v1/ext/tasks',
      headers: { ...command(freshKey()), 'content-type': contentType },
      payload: '{"title":"Call back"}',
    });
    t.equal(res.statusCode, 200, contentType);
  }
});

t.test('the token endpoint refuses other charsets too, JSON and form alike', async (t) => {
  const { integration } = api;
  const fields = tokenRequestBody(integration);
  const json = await anonymous.request({
    method: 'POST',
    url: TOKEN_URL,
    headers: { 'content-type': 'application/json; charset=utf-7' },
    payload: JSON.stringify(fields),
    remoteAddress: freshAddress(),
  });
  assertInvalidRequest(t, json, 415);
  const form = await anonymous.request({
    method: 'POST',
    url: TOKEN_URL,
    headers: { 'content-type': 'application/x-www-form-urlencoded; charset=iso-8859-1' },
    payload: new URLSearchParams(fields).toString(),
    remoteAddress: freshAddress(),
  });
  assertInvalidRequest(t, form, 415);
  const utf8 = await anonymous.request({
    method: 'POST',
    url: TOKEN_URL,
    headers: { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' },
    payload: new URLSearchParams(fields).toString(),
    remoteAddress: freshAddress(),
  });
  t.equal(utf8.statusCode, 200);
});

const invalidUtf8 = (before: string, after: string) =>
  Buffer.concat([Buffer.from(before), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from(after)]);
const encodingIssue = { location: 'body', path: '', keyword: 'encoding' };

t.test('invalid UTF-8 in a body is a 400, not silently replaced', async (t) => {
  const task = await api.request({
    method: 'POST',
    url: '/api/v1/ext/tasks',
    headers: command(freshKey()),
    payload: invalidUtf8('{"title":"Call ', '"}'),
  });
  assertInvalidRequest(t, task, 400, encodingIssue);
  const fields = tokenRequestBody(api.integration);
  const token = await anonymous.request({
    method: 'POST',
    url: TOKEN_URL,
    headers: { 'content-type': 'application/json' },
    payload: invalidUtf8(`${JSON.stringify(fields).slice(0, -1)},"scope":"`, '"}'),
    remoteAddress: freshAddress(),
  });
  assertInvalidRequest(t, token, 400, encodingIssue);
  const form = new URLSearchParams(fields).toString();
  for (const payload of [invalidUtf8(`${form}&scope=`, ''), Buffer.from(`${form}&scope=%C3%28%FF`)]) {
    const res = await anonymous.request({
      method: 'POST',
      url: TOKEN_URL,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload,
      remoteAddress: freshAddress(),
    });
    assertInvalidRequest(t, res, 400, encodingIssue);
  }
  const valid = await api.request({
    method: 'POST',
    url: '/api/v1/ext/tasks',
    headers: command(freshKey()),
    payload: Buffer.from('{"title":"Rappeler Zoë 📞"}'),
  });
  t.equal(valid.statusCode, 200);
  t.equal(valid.json().data.title, 'Rappeler Zoë 📞');
});

t.test('two Authorization headers are a 400, so a proxy and the service cannot read different ones', async (t) => {
  const twice = (first: string, second: string) => ({ authorization: [first, second] as unknown as string });
  const bearerToken = `Bearer ${api.token}`;
  for (const [first, second] of [
    [bearerToken, bearerToken],
    [bearerToken, 'Bearer other'],
  ]) {
    const res = await api.request({ method: 'GET', url: '/api/v1/ext/health', headers: twice(first, second) });
    assertInvalidRequest(t, res, 400, { location: 'header', path: 'authorization' });
  }
  const fields = tokenRequestBody(api.integration);
  const basic = `Basic ${Buffer.from(`${fields.client_id}:${fields.client_secret}`).toString('base64')}`;
  const { client_id: _id, client_secret: _secret, ...rest } = fields;
  const token = await anonymous.request({
    method: 'POST',
    url: TOKEN_URL,
    headers: twice(basic, basic),
    payload: rest,
    remoteAddress: freshAddress(),
  });
  assertInvalidRequest(t, token, 400, { location: 'header', path: 'authorization' });
  const once = await anonymous.request({
    method: 'POST',
    url: TOKEN_URL,
    headers: { authorization: basic },
    payload: rest,
    remoteAddress: freshAddress(),
  });
  t.equal(once.statusCode, 200);
});

/** Sends raw bytes to a listening app (half-closing when `end`) and reads the whole answer until the server closes the connection. */
function rawExchange(port: number, request: string, end = true): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => (end ? socket.end(request) : socket.write(request)));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

function assertApiErrorAnswer(t: Test, raw: string, status: number, error: string) {
  const [head, body] = raw.split('\r\n\r\n');
  const [statusLine, ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  t.equal(Number(statusLine.split(' ')[1]), status, statusLine);
  t.match(headers, {
    'content-type': /^application\/json/,
    connection: 'close',
    'content-length': String(Buffer.byteLength(body)),
    'x-request-id': /^req_/,
  });
  const parsed = JSON.parse(body);
  t.ok(errorShapes.ApiError(parsed), JSON.stringify(errorShapes.ApiError.errors));
  t.match(parsed, { error, code: 'PLATFORM_INVALID_REQUEST', request_id: headers['x-request-id'] });
}

t.test(
  'refusals before any request exists (oversized headers, malformed or slow requests) answer in the ApiError shape',
  async (t) => {
    await api.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = api.app.server.address() as AddressInfo;
    const oversized = await rawExchange(
      port,
      `GET /api/v1/ext/health HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    assertApiErrorAnswer(t, oversized, 431, 'request_header_fields_too_large');
    const malformed = await rawExchange(port, 'GET /api/v1/ext/health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n');
    assertApiErrorAnswer(t, malformed, 400, 'invalid_request');
    // Node checks request time-outs every 30 s by default: the error it would raise is raised here at once.
    const accepted = once(api.app.server, 'connection');
    const slow = rawExchange(port, 'GET /api/v1/ext/health HTTP/1.1\r\nHost: x\r\n', false);
    const [socket] = await accepted;
    api.app.server.emit(
      'clientError',
      Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }),
      socket,
    );
    assertApiErrorAnswer(t, await slow, 408, 'request_timeout');
  },
);
