import t from 'tap';
import { listOperations, readDocument, type JsonObject } from '../../codegen/contract-document.js';
import { noPhiPlans } from '../../codegen/no-phi-plan.js';
import { listWebhooks } from '../../codegen/webhooks.js';

const path = new URL('../../openapi.json', import.meta.url).pathname;
const fresh = () => readDocument(path);
const schemas = (doc: JsonObject) =>
  (doc.components as JsonObject).schemas as Record<string, { properties: Record<string, JsonObject> }>;
const compile = (doc: JsonObject) =>
  noPhiPlans(
    doc,
    listOperations(doc),
    listWebhooks(doc).map((webhook) => webhook.dataSchema),
  );

t.test('every pseudonymized operation of the contract has a plan', async (t) => {
  const { roots } = compile(fresh());
  const pseudonymized = listOperations(fresh())
    .filter((e) => e.operation['x-svc-no-phi'] === 'pseudonymized')
    .map((e) => e.operationId);
  t.same(Object.keys(roots).sort(), pseudonymized.sort());
});

t.test(
  'the data schema of every webhook event is planned, so a no_phi subscription gets what a no_phi session would',
  async (t) => {
    const doc = fresh();
    const { plans } = compile(doc);
    for (const webhook of listWebhooks(doc)) {
      const keptWhole = (schemas(doc)[webhook.dataSchema] as JsonObject)['x-svc-phi'] === 'kept';
      t.ok(
        plans[webhook.dataSchema] || keptWhole,
        `${webhook.type}: ${webhook.dataSchema} has a plan, or is marked kept as a whole`,
      );
    }
    schemas(doc).TaskUpdate.properties.note = { type: 'string' };
    t.throws(
      () => compile(doc),
      /TaskUpdate\.note can hold free text and has no x-svc-phi mark/,
      'an event-only schema is checked too',
    );
  },
);

t.test('a new free-text field without a mark stops codegen, so it cannot leak by default', async (t) => {
  const doc = fresh();
  schemas(doc).Task.properties.nickname = { type: ['string', 'null'] };
  schemas(doc).Episode.properties.extra = { type: 'object' };
  schemas(doc).Task.properties.status_note = { type: 'string', enum: ['a', 'b'] };
  t.throws(() => compile(doc), /Task\.nickname can hold free text and has no x-svc-phi mark/);
  t.throws(() => compile(doc), /Episode\.extra can hold free text and has no x-svc-phi mark/, 'nor a free-form object');
  delete schemas(doc).Task.properties.nickname;
  delete schemas(doc).Episode.properties.extra;
  t.doesNotThrow(() => compile(doc), 'an enumerated string needs no mark');
});

t.test('marks are checked against the documented vocabulary and the schema', async (t) => {
  const unknown = fresh();
  schemas(unknown).Task.properties.title['x-svc-phi'] = 'scrambled';
  t.throws(() => compile(unknown), /Task\.title: x-svc-phi "scrambled" is not in x-svc-phi-reductions/);
  const noFormat = fresh();
  schemas(noFormat).Task.properties.title['x-svc-phi'] = 'year';
  t.throws(() => compile(noFormat), /Task\.title: year needs format date or date-time/);
  const noSibling = fresh();
  schemas(noSibling).PatientSummary.properties.age['x-svc-phi'] = { reduce: 'age', from: 'born' };
  t.throws(() => compile(noSibling), /PatientSummary\.age: "born" is not a sibling property/);
  const undocumented = fresh();
  (undocumented['x-svc-phi-reductions'] as JsonObject[]).pop();
  t.throws(() => compile(undocumented), /x-svc-phi-reductions lists .*; the gateway implements/);
});
