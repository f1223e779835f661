import t from 'tap';
import { readFileSync } from 'node:fs';
import { operations, paging, type OperationDefinition, type Validator } from '../../src/generated/contract.js';
import { parameterSchema } from '../../codegen/validators.js';
import { buildTestApp } from '../helpers/app.js';

const doc = JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8'));
const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
  Object.keys(item)
    .filter((k) => k !== 'parameters')
    .map((method) => `${method.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ':$1')}`),
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
    t.equal(
      op.command,
      ['POST', 'PATCH', 'DELETE'].includes(op.method) && !['runQuery', 'issueToken'].includes(op.operationId),
      `${op.operationId} is a command exactly when it is a POST, PATCH or DELETE other than runQuery and issueToken`,
    );
  }
});

t.test('the app registers exactly the operations of the document', async (t) => {
  const { app } = await buildTestApp();
  await app.ready();
  const registered = registeredApiRoutes(app.printRoutes({ commonPrefix: false }));
  // Beside the operations: the CORS preflight of those that take query tokens from Excel on the web (runQuery).
  const preflights = (Object.values(operations) as OperationDefinition[])
    .filter((op) => op.queryTokens)
    .map((op) => `OPTIONS ${op.url}`);
  // The MCP surface for people is not the partition: its endpoint and its authorization server's own routes.
  const mcpSurface = /^[A-Z]+ \/api\/v1\/(mcp$|oauth\/(authorize|revoke|interaction)(\/|$))/;
  t.same(registered.filter((route) => !mcpSurface.test(route)).sort(), [...documented, ...preflights].sort());
  t.ok(registered.includes('POST /api/v1/mcp'), 'the MCP endpoint is registered beside the partition');
});

type Parameter = {
  name: string;
  in: 'path' | 'query' | 'header';
  schema: { type?: string; minimum?: number; maximum?: number };
};
const SLOT = { path: 'params', query: 'query', header: 'headers' } as const;

function numericParameters(): Array<{ operationId: string; parameter: Parameter }> {
  const resolveRef = (p: Parameter & { $ref?: string }): Parameter =>
    p.$ref ? doc.components.parameters[p.$ref.split('/').pop()!] : p;
  return Object.values(
    doc.paths as Record<string, Record<string, { operationId?: string; parameters?: Parameter[] }>>,
  ).flatMap((item) =>
    Object.values(item)
      .filter((op) => op.operationId)
      .flatMap((op) =>
        (op.parameters ?? [])
          .map(resolveRef)
          .filter((p) => ['integer', 'number'].includes(p.schema.type ?? ''))
          .map((parameter) => ({ operationId: op.operationId!, parameter })),
      ),
  );
}

t.test(
  'every numeric parameter is bounded, and its validator refuses what is not a finite number in bounds',
  async (t) => {
    const numeric = numericParameters();
    t.ok(numeric.length >= 20, 'limit, offset and the quality years');
    for (const { operationId, parameter } of numeric) {
      const { name, schema } = parameter;
      const key = parameter.in === 'header' ? name.toLowerCase() : name;
      const validate = (operations[operationId as keyof typeof operations].validate as Record<string, Validator>)[
        SLOT[parameter.in]
      ];
      const refused = (value: string) =>
        !validate({ [key]: value }) && (validate.errors ?? []).some((e) => e.instancePath === `/${key}`);
      t.type(schema.minimum, 'number', `${operationId} ${name} minimum`);
      t.type(schema.maximum, 'number', `${operationId} ${name} maximum`);
      for (const value of [
        '1e400',
        '-1e400',
        'Infinity',
        '-Infinity',
        'NaN',
        '9223372036854775807',
        String(schema.maximum! + 1),
        String(schema.minimum! - 1),
      ]) {
        t.ok(refused(value), `${operationId} ${name}=${value}`);
      }
      t.notOk(refused(String(schema.maximum)), `${operationId} ${name} at its maximum`);
    }
  },
);

t.test('codegen refuses a numeric parameter without both bounds', async (t) => {
  const entry = {
    operationId: 'listThings',
    method: 'GET',
    path: '/things',
    operation: {},
    parameters: [{ name: 'page', in: 'query' as const, required: false, schema: { type: 'integer', minimum: 0 } }],
  };
  t.throws(() => parameterSchema(entry, 'query'), /listThings: numeric parameter "page" needs a minimum and a maximum/);
});

t.test('x-svc-paging states the bounds the Limit and Offset parameters enforce', async (t) => {
  const { Limit, Offset } = doc.components.parameters;
  const { exact_total_max: exactTotalMax, ...bounds } = paging;
  t.same(bounds, {
    default_limit: Limit.schema.default,
    max_limit: Limit.schema.maximum,
    max_offset: Offset.schema.maximum,
  });
  t.ok(exactTotalMax >= Limit.schema.maximum, 'a list that fits one page of the largest size has an exact total');
  t.match(
    doc.components.schemas.PageMeta.properties.total.description,
    `(${exactTotalMax})`,
    'PageMeta.total states the bound',
  );
});
