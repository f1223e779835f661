import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { listOperations, readDocument } from './contract-document.js';
import { v1Shapes } from '../src/shared/contract-v1.js';
import { generateTypes } from './types.js';
import { compileValidators } from './validators.js';
import { ERROR_SHAPES, generateRouteTable, planOperation, type ValidatorPlan } from './route-table.js';
import { noPhiPlans } from './no-phi-plan.js';
import { requestFields } from './request-fields.js';
import { handleParameters } from './handle-parameters.js';
import { listWebhooks } from './webhooks.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const doc = readDocument(join(root, 'openapi.json'));

const plan: ValidatorPlan = { parameters: {}, bodies: {} };
const shapes = v1Shapes(doc);
const operations = listOperations(doc);
const webhooks = listWebhooks(doc);
const noPhi = noPhiPlans(
  doc,
  operations,
  webhooks.map((webhook) => webhook.dataSchema),
);
const entries = operations.map((entry) => planOperation(doc, entry, plan, new Set(Object.keys(shapes)), noPhi.roots));
// The two error shapes, for refusals outside any operation (unknown path, method, body size).
for (const name of ERROR_SHAPES) plan.bodies[`schema${name}`] = { $ref: `#/components/schemas/${name}` };
// What a receiver gets: each event type's envelope, checked by tests of deliveries.
for (const webhook of webhooks)
  plan.bodies[`${webhook.operationId}Body`] = { $ref: `#/components/schemas/${webhook.envelopeSchema}` };

const files: Record<string, string> = {
  'src/generated/openapi.ts': await generateTypes(doc),
  'src/generated/validators-parameters.ts': compileValidators(doc, plan.parameters, true),
  'src/generated/validators-bodies.ts': compileValidators(doc, plan.bodies, false),
  'src/generated/contract.ts': generateRouteTable(
    doc,
    entries,
    shapes,
    noPhi.plans,
    requestFields(doc, operations),
    handleParameters(doc, operations),
    webhooks,
  ),
};

const check = process.argv.includes('--check');
const stale = Object.entries(files).filter(([path, content]) => {
  const file = join(root, path);
  return !existsSync(file) || readFileSync(file, 'utf8') !== content;
});

if (check) {
  if (stale.length > 0) {
    console.error(
      `Generated code is out of date with openapi.json: ${stale.map(([p]) => p).join(', ')}\nRun \`npm run codegen\` and commit the result.`,
    );
    process.exit(1);
  }
  console.log('codegen: src/generated is up to date with openapi.json');
} else {
  for (const [path, content] of stale) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  console.log(`codegen: ${stale.length} of ${Object.keys(files).length} generated files changed`);
}
