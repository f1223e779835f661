import t from 'tap';
import { readFileSync } from 'node:fs';
import { operations, type OperationDefinition } from '../../src/generated/contract.js';
import { buildTestApp } from '../helpers/app.js';

const doc = JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8'));
const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
  Object.keys(item).filter((k) => k !== 'parameters').map((method) => `${method.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ':$1')}`),
);

/** Routes the app registered under /api, read from Fastify's own route tree (nested lines extend their parent's path). */
function registeredApiRoutes(tree: string): string[] {
  const prefixes: string[] = [];
  return tree.split('\n').flatMap((line) => {
    const match = /^([│ ]*)[├└]── (\S+)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) return [];
    const depth = match[1].length / 4;
    const path = (prefixes[depth - 1] ?? '') + match[2];
    prefixes[depth] = path;
    return path.startsWith('/api/') && match[3] ? match[3].split(', ').map((method) => `${method} ${path}`) : [];
  });
}

t.test('the document holds all 28 operations of the spec, each with its metadata', async (t) => {
  t.equal(documented.length, 28);
  for (const op of Object.values(operations) as OperationDefinition[]) {
    t.ok(['allowed', 'pseudonymized', 'denied'].includes(op.noPhi), `${op.operationId} x-svc-no-phi`);
    t.type(op.command, 'boolean', `${op.operationId} x-svc-command`);
    t.ok(Number.isInteger(op.costUnits) && op.costUnits >= 0, `${op.operationId} x-svc-cost-units`);
    t.equal(op.command, ['POST', 'PATCH', 'DELETE'].includes(op.method) && !['runQuery', 'issueToken'].includes(op.operationId), `${op.operationId} is a command exactly when spec part 4 says so`);
  }
});

t.test('the app registers exactly the operations of the document', async (t) => {
  const { app } = await buildTestApp();
  await app.ready();
  const registered = registeredApiRoutes(app.printRoutes({ commonPrefix: false }));
  t.same(registered.sort(), [...documented].sort());
});
