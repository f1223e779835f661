import t from 'tap';
import { listOperations, readDocument, type JsonObject } from '../../codegen/contract-document.js';
import { handleParameters } from '../../codegen/handle-parameters.js';
import { handleParameters as generated } from '../../src/generated/contract.js';

const path = new URL('../../openapi.json', import.meta.url).pathname;
const fresh = () => readDocument(path);
const compile = (doc: JsonObject) => handleParameters(doc, listOperations(doc));
type Parameter = JsonObject & { name: string; description?: string };
const pathItem = (doc: JsonObject, at: string) => (doc.paths as JsonObject)[at] as JsonObject;
const parameterOf = (doc: JsonObject, at: string, method: string, name: string) =>
  [
    ...((pathItem(doc, at).parameters ?? []) as Parameter[]),
    ...(((pathItem(doc, at)[method] as JsonObject).parameters ?? []) as Parameter[]),
  ].find((p) => p.name === name)!;

t.test('the route table lists what the contract marks, read by codegen', async (t) => {
  t.same(JSON.parse(JSON.stringify(generated)), compile(fresh()));
  t.match(compile(fresh()).createTask, [
    { in: 'body', field: 'related_resource.id', kind: 'patient', when: { property: 'type', values: ['patient'] } },
  ]);
});

t.test('a parameter that takes a handle is marked, so that the gateway resolves it', async (t) => {
  const listed = compile(fresh());
  for (const entry of listOperations(fresh())) {
    for (const parameter of entry.parameters as Parameter[]) {
      if (!/handle/.test(parameter.description ?? '')) continue;
      t.ok(
        listed[entry.operationId]?.some((p) => p.field === parameter.name),
        `${entry.operationId} ${parameter.name} says it takes a handle`,
      );
    }
  }
});

t.test('codegen refuses a request mark it cannot honour', async (t) => {
  const withheld = fresh();
  parameterOf(withheld, '/api/v1/ext/referrals', 'get', 'patient_id')['x-svc-phi'] = 'withheld';
  t.throws(() => compile(withheld), /listReferrals patient_id: a parameter takes only a handle mark/);
  const unknownKind = fresh();
  parameterOf(unknownKind, '/api/v1/ext/referrals', 'get', 'patient_id')['x-svc-phi'] = {
    reduce: 'handle',
    kind: 'nurse',
  };
  t.throws(() => compile(unknownKind), /listReferrals patient_id: "nurse" is not a handle kind/);
});

t.test('a handle in a list of a request body stops codegen: the gateway resolves one value per mark', async (t) => {
  const doc = fresh();
  const schemas = (doc.components as JsonObject).schemas as Record<string, JsonObject & { properties: JsonObject }>;
  schemas.TaskCreateRequest.properties.also_related = {
    type: 'array',
    items: { $ref: '#/components/schemas/RelatedResource' },
  };
  t.throws(() => compile(doc), /body also_related: a handle inside a list is not resolved by the gateway/);
});
