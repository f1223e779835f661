import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { seedDemoAgency } from '../../src/demo/seed.js';
import { publishedDocuments } from '../../src/docs/api-reference.js';
import { readProjectFile } from '../../src/project-files.js';
import { testDatabase } from '../helpers/database.js';
import { createTestIntegration } from '../helpers/identity.js';
import { issueToken, operationIds, send, startPrism, walk } from '../helpers/prism-walk.js';
import { listeningApp } from '../mcp/mcp-helpers.js';

// A client generated from a served document may send any svc-contract-version that document allows, and expects the
// document's shapes back. So every served document is walked, operation by operation, with every version it allows,
// through a validating proxy (Prism) that checks requests and responses against that document.
type Json = Record<string, any>;

const { base } = await listeningApp(t);
const { db } = await testDatabase();
const credentials = await createTestIntegration(db);

/** The versions a document lets a client send: its header's enum, and no header at all when it is optional. */
function allowedVersions(document: Json): Array<string | undefined> {
  const header = Object.values<Json>(document.components.parameters).find(
    (p) => p.in === 'header' && p.name === 'svc-contract-version',
  );
  if (!header) throw new Error(`${document.info.title} has no svc-contract-version header`);
  return [...header.schema.enum, ...(header.required ? [] : [undefined])];
}

const dir = t.testdir();

/**
 * A document for Prism, in a file: Prism 5.14.2 cannot download one by URL on Node 24 ("Expected signal to be an
 * instance of AbortSignal").
 */
function inFile(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

/** A copy of a document requiring a health field the server never sends: its proxy must flag the answer. */
function doctored(document: Json): Json {
  const copy = structuredClone(document);
  const health = copy.components.schemas.Health;
  health.required = [...(health.required ?? []), 'walk_canary'];
  return copy;
}

// Every document the app registers, so a new one is walked without being listed here. Paths serving the same bytes
// (the current document and its version's) share one walk. The proxies, the doctored one's too, start together, while
// the agency is seeded.
const urls = publishedDocuments(JSON.parse(readProjectFile('openapi.json')), base).map(
  (d) => `${base}/platform/api${d.segment}/openapi.json`,
);
const pathsByText = new Map<string, string[]>();
for (const url of urls) {
  const text = await (await fetch(url)).text();
  pathsByText.set(text, [...(pathsByText.get(text) ?? []), new URL(url).pathname]);
}
const proxied = async ([text, paths]: [string, string[]], i: number) => ({
  paths: paths.join(' and '),
  document: JSON.parse(text) as Json,
  proxy: await startPrism(t, inFile(`served-${i}.json`, text), base),
});
const [served, doctoredProxy] = await Promise.all([
  Promise.all([...pathsByText].map(proxied)),
  startPrism(t, inFile('doctored.json', JSON.stringify(doctored(JSON.parse([...pathsByText.keys()][0])))), base),
  seedDemoAgency(db, { agencyId: credentials.agencyId, size: 'small' }),
]);

let walks = 0;
for (const { paths, document, proxy } of served) {
  for (const version of allowedVersions(document)) {
    t.test(`${paths} with svc-contract-version ${version ?? 'left out'}: every operation, no violation`, async (t) => {
      const outcomes = await walk(proxy, version, credentials, `W${(walks += 1)}`);
      for (const o of outcomes)
        t.same(
          { status: o.status < 400 ? 'ok' : o.status, violations: o.violations },
          { status: 'ok', violations: [] },
          `${o.call.method} ${o.call.path}`,
        );
      const visited = new Set(outcomes.map((o) => o.call.operationId));
      t.same(
        operationIds(document).filter((id) => !visited.has(id)),
        [],
        'no operation of the document left out',
      );
    });
  }
  // The proxy must flag a request the document refuses, or it is not validating and the walks prove nothing.
  t.test(`${paths}: the proxy flags a request the document refuses`, async (t) => {
    const version = allowedVersions(document)[0];
    const token = (await send(proxy, version, undefined, issueToken(credentials, 'no_phi'))).body?.access_token;
    const canary = await send(proxy, version, token, {
      operationId: 'listPatients',
      method: 'GET',
      path: '/api/v1/ext/patients',
      query: { limit: 'many' },
    });
    t.ok(
      canary.violations.some((v) => v.includes('limit')),
      `flagged: ${canary.violations.join('; ')}`,
    );
  });
}

t.test('the proxy flags a response the document does not describe', async (t) => {
  const version = allowedVersions(served[0].document)[0];
  const token = (await send(doctoredProxy, version, undefined, issueToken(credentials, 'no_phi'))).body?.access_token;
  const canary = await send(doctoredProxy, version, token, {
    operationId: 'getHealth',
    method: 'GET',
    path: '/api/v1/ext/health',
  });
  t.ok(
    canary.violations.some((v) => v.includes('walk_canary')),
    `flagged: ${canary.violations.join('; ')}`,
  );
});
