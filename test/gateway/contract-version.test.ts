import t from 'tap';
import { buildSignedInApp } from '../helpers/app.js';

const api = await buildSignedInApp();
const health = (headers: Record<string, string> = {}) =>
  api.request({ method: 'GET', url: '/api/v1/ext/health', headers });

t.test('absent svc-contract-version serves the current version 2', async (t) => {
  const res = await health();
  t.equal(res.statusCode, 200);
  t.equal(res.headers['svc-extension-contract-version'], '2');
  t.notOk(res.headers.deprecation);
  t.notOk(res.json().meta?.deprecations);
});

t.test('version 1 is served with deprecation signals naming version 2', async (t) => {
  const res = await health({ 'svc-contract-version': '1' });
  t.equal(res.statusCode, 200);
  t.equal(res.headers['svc-extension-contract-version'], '1');
  t.equal(res.headers.deprecation, `@${Date.parse('2026-07-25T00:00:00Z') / 1000}`);
  t.match(res.headers.link, /rel="successor-version"/);
  t.match(res.json().meta.deprecations, [{ kind: 'contract_version', name: '1', successor: '2' }]);
});

t.test('unknown versions are refused naming the supported ones', async (t) => {
  for (const version of ['0', '3', 'abc', '2.0', '']) {
    const res = await health({ 'svc-contract-version': version });
    t.equal(res.statusCode, 400, `version "${version}"`);
    t.match(res.json().user_message, /Supported versions: 1, 2/);
  }
});
