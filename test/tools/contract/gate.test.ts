import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { breakingChanges } from '../../../tools/contract/gate.js';
import { tableChanges } from '../../../tools/contract/table-rules.js';
import { redoclyConfig, root } from '../../../tools/contract/snapshots.js';
import { fixtures, templateDocument, templatePathItem } from './fixtures.js';

const slug = (rule: string) => rule.replace(/[^a-z0-9-]+/g, '-');
const pathFixtures = fixtures.filter((f) => !f.document);

/** All path fixtures side by side, each on its own path, so that one redocly run rates them all. */
function combinedPair() {
  const base = templateDocument();
  const head = templateDocument();
  for (const fixture of pathFixtures) {
    const id = slug(fixture.rule);
    base.paths[`/${id}`] = templatePathItem(id);
    const item = templatePathItem(id);
    fixture.change(item, head);
    if (Object.keys(item).length > 0) head.paths[`/${id}`] = item;
  }
  return { base, head };
}

t.test('each breaking fixture fails the gate at its own path, and each compatible one passes', async (t) => {
  const { base, head } = combinedPair();
  const changes = breakingChanges(base, head, redoclyConfig);
  for (const fixture of pathFixtures) {
    const at = new RegExp(`^#/paths/~1${slug(fixture.rule)}(/|$)`);
    const found = changes.filter((c) => at.test(c.pointer));
    if (fixture.breaking) t.ok(found.length > 0, `${fixture.rule} is breaking`);
    else t.same(found, [], `${fixture.rule} is compatible`);
  }
  t.equal(changes.filter((c) => !c.pointer.startsWith('#/paths/')).length, 0, 'nothing outside the fixtures');
});

t.test('document-table fixtures: each tightening is named, each compatible change passes', async (t) => {
  for (const fixture of fixtures.filter((f) => f.document)) {
    const base = templateDocument();
    const head = templateDocument();
    fixture.change({}, head);
    const found = tableChanges(base, head);
    if (fixture.breaking)
      t.ok(
        found.some((c) => c.rule === fixture.rule),
        `${fixture.rule} is breaking: ${found.map((c) => c.rule)}`,
      );
    else t.same(found, [], `${fixture.rule} is compatible`);
  }
});

t.test('the table rules name the rule, the place and what changed', async (t) => {
  const base = templateDocument();
  const head = templateDocument();
  base.paths['/items'] = templatePathItem('items');
  head.paths['/items'] = templatePathItem('items');
  head.paths['/items'].get['x-svc-no-phi'] = 'denied';
  head['x-svc-error-codes'][0].status = 410;
  t.same(tableChanges(base, head), [
    {
      rule: 'x-svc-no-phi-tightened',
      pointer: '#/paths/~1items/get/x-svc-no-phi',
      message: 'GET /items is now denied in a no_phi session (was allowed).',
    },
    {
      rule: 'x-svc-error-codes-status-changed',
      pointer: '#/x-svc-error-codes',
      message: 'PLATFORM_RESOURCE_NOT_FOUND: status changed from 404 to 410.',
    },
  ]);
});

t.test(
  'npm run contract:check -- --base --head on any two documents: exit 1 naming each breaking change, 0 when compatible',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'gate-cli-'));
    const write = (name: string, doc: object) => {
      writeFileSync(join(dir, name), JSON.stringify(doc));
      return join(dir, name);
    };
    const base = templateDocument();
    base.paths['/items'] = templatePathItem('items');
    const compatible = structuredClone(base);
    compatible.paths['/items'].get.parameters.push({
      name: 'since',
      in: 'query',
      required: false,
      schema: { type: 'string' },
    });
    const breaking = structuredClone(compatible);
    breaking.paths['/items'].get.responses['200'].content['application/json'].schema.properties.kind.enum.push('fax');
    breaking.paths['/items'].post['x-svc-scope'] = 'external:items:write';
    const run = (head: string) =>
      spawnSync(
        process.execPath,
        ['--import', 'tsx', 'tools/contract/check.ts', '--base', write('base.json', base), '--head', head],
        { cwd: root, encoding: 'utf8' },
      );

    const ok = run(write('compatible.json', compatible));
    t.equal(ok.status, 0, ok.stderr);
    t.match(ok.stdout, /no breaking change/);
    const refused = run(write('breaking.json', breaking));
    t.equal(refused.status, 1);
    t.match(refused.stderr, /2 breaking changes/);
    t.match(
      refused.stderr,
      /enum-values-added\s+#\/paths\/~1items\/get\/responses\/200\/content\/application~1json\/schema\/properties\/kind\/enum/,
    );
    t.match(refused.stderr, /x-svc-scope-tightened\s+#\/paths\/~1items\/post\/x-svc-scope/);
  },
);

t.test(
  'a new known error code is compatible: the typed code also admits any string, and the table rule judges the code',
  async (t) => {
    const withCodes = (codes: string[]) => {
      const doc = templateDocument();
      doc.components.schemas = { KnownErrorCode: { type: 'string', enum: codes } };
      doc.paths['/items'] = templatePathItem('items');
      doc.paths['/items'].get.responses['404'] = {
        description: 'Not found.',
        content: {
          'application/json': {
            schema: {
              type: 'object',
              properties: { code: { anyOf: [{ $ref: '#/components/schemas/KnownErrorCode' }, { type: 'string' }] } },
            },
          },
        },
      };
      return doc;
    };
    const base = withCodes(['PLATFORM_RESOURCE_NOT_FOUND', 'PLATFORM_RATE_LIMITED']);
    const head = withCodes(['PLATFORM_RESOURCE_NOT_FOUND', 'PLATFORM_RATE_LIMITED', 'PLATFORM_NEW']);
    head['x-svc-error-codes'].push({
      code: 'PLATFORM_NEW',
      status: 409,
      category: 'conflict',
      retryable: false,
      terminal: true,
    });
    t.same(breakingChanges(base, head, redoclyConfig), []);
    const elsewhere = structuredClone(head);
    elsewhere.paths['/items'].get.responses['200'].content['application/json'].schema.properties.kind.enum.push('fax');
    t.same(
      breakingChanges(base, elsewhere, redoclyConfig).map((c) => c.rule),
      ['enum-values-added'],
      'any other widened response enum still fails',
    );
  },
);
