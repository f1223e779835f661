import t from 'tap';
import { readProjectFile } from '../../src/project-files.js';
import { buildTestApp } from '../helpers/app.js';

const api = await buildTestApp();
const contract = readProjectFile('openapi.json');

t.test('the contract is served byte for byte with a strong ETag', async (t) => {
  const res = await api.request({ method: 'GET', url: '/platform/api/openapi.json' });
  t.equal(res.statusCode, 200);
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8');
  t.equal(res.headers['cache-control'], 'public, max-age=300');
  t.equal(res.body, contract);
  t.same(res.json(), JSON.parse(contract));
  const etag = String(res.headers.etag);
  t.match(etag, /^"[^"]+"$/, 'strong, quoted');

  const again = await api.request({ method: 'GET', url: '/platform/api/openapi.json' });
  t.equal(again.headers.etag, etag, 'stable across requests');

  for (const ifNoneMatch of [etag, `"other", ${etag}`, `W/${etag}`, '*']) {
    const cached = await api.request({ method: 'GET', url: '/platform/api/openapi.json', headers: { 'if-none-match': ifNoneMatch } });
    t.equal(cached.statusCode, 304, ifNoneMatch);
    t.equal(cached.body, '');
    t.equal(cached.headers.etag, etag);
  }
  const stale = await api.request({ method: 'GET', url: '/platform/api/openapi.json', headers: { 'if-none-match': '"stale"' } });
  t.equal(stale.statusCode, 200);
  t.equal(stale.body, contract);
});

t.test('the reference page loads only assets this app serves', async (t) => {
  const bare = await api.request({ method: 'GET', url: '/platform/api' });
  t.equal(bare.statusCode, 301);
  t.equal(bare.headers.location, '/platform/api/');
  for (const url of ['/platform/api/']) {
    const res = await api.request({ method: 'GET', url });
    t.equal(res.statusCode, 200, url);
    t.match(res.headers['content-type'], /^text\/html/);
    const html = res.body;
    t.notMatch(html, /https?:\/\//, 'no absolute URL at all');
    t.notMatch(html, /fonts\.googleapis|fonts\.scalar|cdn|unpkg|jsdelivr/i);
    t.match(html, /"withDefaultFonts": false/, 'the bundle is told not to load the font CDN');

    const scripts = [...html.matchAll(/<script[^>]*\ssrc="([^"]+)"/g)].map((m) => m[1]);
    const links = [...html.matchAll(/<link[^>]*\shref="([^"]+)"/g)].map((m) => m[1]);
    const documents = [...html.matchAll(/"url": "([^"]+)"/g)].map((m) => m[1]);
    t.same(documents, ['/platform/api/openapi.json']);
    t.ok(scripts.length > 0, 'the page loads its script');
    for (const asset of [...scripts, ...links, ...documents]) {
      const path = new URL(asset, `http://app.invalid${url}`);
      t.equal(path.host, 'app.invalid', `${asset} is same-origin`);
      const fetched = await api.request({ method: 'GET', url: path.pathname });
      t.equal(fetched.statusCode, 200, asset);
      if (scripts.includes(asset)) t.match(fetched.headers['content-type'], /javascript/);
    }
  }
});

t.test('the reference routes leave 404 and 405 to the partition handler', async (t) => {
  const missing = await api.request({ method: 'GET', url: '/api/v1/ext/no-such-thing' });
  t.equal(missing.statusCode, 404);
  t.equal(missing.json().code, 'PLATFORM_RESOURCE_NOT_FOUND');
  const wrongMethod = await api.request({ method: 'DELETE', url: '/api/v1/ext/patients' });
  t.equal(wrongMethod.statusCode, 405);
  t.equal(wrongMethod.headers.allow, 'GET');
  const notAnAsset = await api.request({ method: 'GET', url: '/platform/api/openapi.yaml' });
  t.equal(notAnAsset.statusCode, 404, 'the plugin adds no document routes of its own');
});
