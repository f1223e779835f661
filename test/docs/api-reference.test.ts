import { runInNewContext } from 'node:vm';
import t from 'tap';
import { parse as parseYaml } from 'yaml';
import { contractChangelog } from '../../src/docs/changelog.js';
import { currentDocument, versionDocument, withServer } from '../../src/docs/contract-documents.js';
import { contractVersions } from '../../src/generated/contract.js';
import { readProjectFile } from '../../src/project-files.js';
import { buildTestApp } from '../helpers/app.js';

const baseUrl = 'https://api.agency.example';
const api = await buildTestApp({ tokenIssuer: baseUrl });
const contract = readProjectFile('openapi.json');
const manifest = (version: string) => contractVersions.find((v) => v.version === version)!.manifest_version;

t.test(
  'each published document is served as JSON and YAML with a strong ETag, naming this deployment as its server',
  async (t) => {
    const source = JSON.parse(contract);
    const expected: Record<string, object> = {
      '/platform/api/openapi.json': withServer(currentDocument(source), baseUrl),
      '/platform/api/v1/openapi.json': withServer(versionDocument(source, '1'), baseUrl),
      '/platform/api/v2/openapi.json': withServer(versionDocument(source, '2'), baseUrl),
    };
    for (const [url, document] of Object.entries(expected)) {
      const res = await api.request({ method: 'GET', url });
      t.equal(res.statusCode, 200, url);
      t.equal(res.headers['content-type'], 'application/json; charset=utf-8');
      t.equal(res.headers['cache-control'], 'public, max-age=300');
      t.same(res.json(), document, `${url} is the derived document`);
      t.same(res.json().servers, [{ url: baseUrl, description: 'This deployment (its public base URL).' }]);
      const yaml = await api.request({ method: 'GET', url: url.replace(/json$/, 'yaml') });
      t.equal(yaml.statusCode, 200);
      t.equal(yaml.headers['content-type'], 'application/yaml; charset=utf-8');
      t.same(parseYaml(yaml.body), document, 'the YAML form is the same document');
      t.not(yaml.headers.etag, res.headers.etag);

      const etag = String(res.headers.etag);
      t.match(etag, /^"[^"]+"$/, 'strong, quoted');
      const again = await api.request({ method: 'GET', url });
      t.equal(again.headers.etag, etag, 'stable across requests');
      for (const ifNoneMatch of [etag, `"other", ${etag}`, `W/${etag}`, '*']) {
        const cached = await api.request({ method: 'GET', url, headers: { 'if-none-match': ifNoneMatch } });
        t.equal(cached.statusCode, 304, ifNoneMatch);
        t.equal(cached.body, '');
        t.equal(cached.headers.etag, etag);
      }
      const stale = await api.request({ method: 'GET', url, headers: { 'if-none-match': '"stale"' } });
      t.equal(stale.statusCode, 200);
    }
    const v1 = (await api.request({ method: 'GET', url: '/platform/api/v1/openapi.json' })).json();
    t.equal(v1.info.version, manifest('1'));
    t.same(v1.components.parameters.ContractVersion.schema, { type: 'string', enum: ['1'], default: '1' });
    t.ok(v1.components.schemas.PatientSummary.required.includes('full_name'), 'v1 names the patient full_name');
    t.notOk('display_name' in v1.components.schemas.PatientSummary.properties, 'and has no display_name');
    t.ok(v1.paths['/api/v1/ext/patients'].get.deprecated, 'its operations are deprecated');
    const current = await api.request({ method: 'GET', url: '/platform/api/openapi.json' });
    t.equal(
      current.body,
      (await api.request({ method: 'GET', url: '/platform/api/v2/openapi.json' })).body,
      "the current document is version 2's",
    );
    t.same(
      current.json().components.parameters.ContractVersion.schema,
      { type: 'string', enum: ['2'], default: '2' },
      'so it allows version 2 only, whose shapes it describes',
    );
  },
);

t.test('the changelog is served beside the documents and in their descriptions', async (t) => {
  const res = await api.request({ method: 'GET', url: '/platform/api/changelog.md' });
  t.equal(res.statusCode, 200);
  t.equal(res.headers['content-type'], 'text/markdown; charset=utf-8');
  t.equal(res.body, contractChangelog(JSON.parse(contract)));
  const v2 = (await api.request({ method: 'GET', url: '/platform/api/v2/openapi.json' })).json();
  t.match(
    v2.info.description,
    `### Version 2 (manifest ${manifest('2')}): current`,
    'one heading level down in the description',
  );
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
    // An object literal, not JSON: function-valued options are written as their source (the version menu's).
    const config = runInNewContext(`(${html.match(/createApiReference\('#app', (\{[\s\S]*\})\)\s*<\/script>/)![1]})`);
    const documents: string[] = config.sources.map((source: { url: string }) => source.url);
    t.same(
      documents,
      ['/platform/api/v2/openapi.json', '/platform/api/v1/openapi.json'],
      'the version switch, the current version first',
    );
    // The page is opened under any name of this server (test/docs/reference-page.test.ts drives it from two).
    t.same(
      config.servers.map((server: { url: string }) => server.url),
      ['/'],
      "Test Request calls the page's own origin",
    );
    t.same(
      config.authentication.securitySchemes,
      { oauth2: { flows: { clientCredentials: { tokenUrl: '/api/v1/oauth/token' } } } },
      'and fetches tokens there',
    );
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

t.test('browsers get a favicon, drawn in code: an ICO of one 16x16 image', async (t) => {
  const res = await api.request({ method: 'GET', url: '/favicon.ico' });
  t.equal(res.statusCode, 200);
  t.equal(res.headers['content-type'], 'image/x-icon');
  t.equal(res.headers['cache-control'], 'public, max-age=86400');
  const ico = res.rawPayload;
  t.same([...ico.subarray(0, 6)], [0, 0, 1, 0, 1, 0], 'ICONDIR: an icon, one image');
  t.same([ico[6], ico[7]], [16, 16], '16x16');
  t.equal(ico.readUInt32LE(14), ico.length - 22, 'the image is the rest of the file');
  t.equal(ico.readUInt32LE(18), 22, 'right after the directory');
});

t.test('the reference routes leave 404 and 405 to the partition handler', async (t) => {
  const missing = await api.request({ method: 'GET', url: '/api/v1/ext/no-such-thing' });
  t.equal(missing.statusCode, 404);
  t.equal(missing.json().code, 'PLATFORM_RESOURCE_NOT_FOUND');
  const wrongMethod = await api.request({ method: 'DELETE', url: '/api/v1/ext/patients' });
  t.equal(wrongMethod.statusCode, 405);
  t.equal(wrongMethod.headers.allow, 'GET');
  const notAnAsset = await api.request({ method: 'GET', url: '/platform/api/v3/openapi.json' });
  t.equal(notAnAsset.statusCode, 404, 'no document for a version that does not exist');
});
