import t from 'tap';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { currentDocument, versionDocument } from '../../src/docs/contract-documents.js';
import { readProjectFile } from '../../src/project-files.js';
import { pointerToken } from '../../src/shared/json-pointer.js';

type Node = Record<string, any>;
const source: Node = JSON.parse(readProjectFile('openapi.json'));
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

interface Media {
  where: string;
  pointer: string;
  media: Node;
}

/** Every request and response body of every operation, with the JSON pointer of its media type object. */
function mediaOf(doc: Node, operationId?: string): Array<Media & { operationId: string; status?: string }> {
  const found: Array<Media & { operationId: string; status?: string }> = [];
  for (const [path, item] of Object.entries<Node>(doc.paths)) {
    for (const method of METHODS.filter((m) => item[m])) {
      const op = item[method];
      if (operationId && op.operationId !== operationId) continue;
      const at = `#/paths/${pointerToken(path)}/${method}`;
      for (const [type, media] of Object.entries<Node>(op.requestBody?.content ?? {})) {
        found.push({
          operationId: op.operationId,
          where: `${op.operationId} request ${type}`,
          pointer: `${at}/requestBody/content/${pointerToken(type)}`,
          media,
        });
      }
      for (const [status, own] of Object.entries<Node>(op.responses)) {
        const pointer = typeof own.$ref === 'string' ? own.$ref : `${at}/responses/${status}`;
        const response = typeof own.$ref === 'string' ? doc.components.responses[own.$ref.split('/').pop()!] : own;
        for (const [type, media] of Object.entries<Node>(response.content ?? {})) {
          found.push({
            operationId: op.operationId,
            status,
            where: `${op.operationId} ${status} ${type}`,
            pointer: `${pointer}/content/${pointerToken(type)}`,
            media,
          });
        }
      }
    }
  }
  return found;
}

const examplesOf = (media: Node): Array<[string, unknown]> => [
  ...(media.example !== undefined ? [['example', media.example] as [string, unknown]] : []),
  ...Object.entries<Node>(media.examples ?? {}).map(([name, example]) => [name, example.value] as [string, unknown]),
];

const documents: Record<string, Node> = {
  current: currentDocument(source),
  v1: versionDocument(source, '1'),
  v2: versionDocument(source, '2'),
};

t.test('every example of every published document is valid against its schema', async (t) => {
  for (const [name, doc] of Object.entries(documents)) {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema(doc, name);
    let checked = 0;
    for (const { where, pointer, media } of mediaOf(doc)) {
      const examples = examplesOf(media);
      if (examples.length === 0 || !media.schema) continue;
      const validate = ajv.compile({ $ref: `${name}${pointer}/schema` });
      for (const [label, value] of examples) {
        checked++;
        t.ok(validate(value), `${name}: ${where} (${label}) ${ajv.errorsText(validate.errors)}`);
      }
    }
    t.ok(checked > 60, `${name}: ${checked} examples checked`);
  }
});

const operationsOf = (doc: Node): Node[] =>
  Object.values<Node>(doc.paths).flatMap((item) => METHODS.filter((m) => item[m]).map((m) => item[m]));
const responseOf = (doc: Node, own: Node): Node =>
  typeof own.$ref === 'string' ? doc.components.responses[own.$ref.split('/').pop()!] : own;
// Statuses that carry no body by definition.
const BODILESS = /^(204|304)$/;

t.test(
  'every operation has a request and a success example, and every error status it documents has one',
  async (t) => {
    const doc = documents.current;
    for (const operation of operationsOf(doc)) {
      for (const [status, own] of Object.entries<Node>(operation.responses)) {
        if (!BODILESS.test(status))
          t.ok(
            Object.keys(responseOf(doc, own).content ?? {}).length > 0,
            `${operation.operationId} ${status} describes its body`,
          );
      }
      for (const { where, media } of mediaOf(doc, operation.operationId))
        t.ok(examplesOf(media).length > 0, `${where} has an example`);
    }
  },
);

t.test('every operation that takes a body declares 413 and 415 (the server answers both before it runs)', async (t) => {
  for (const operation of operationsOf(documents.current).filter((op) => op.requestBody)) {
    t.ok(operation.responses['413'], `${operation.operationId} declares 413`);
    t.ok(operation.responses['415'], `${operation.operationId} declares 415`);
  }
});

t.test('version 1 examples are served in version 1 names', async (t) => {
  const patients = (doc: Node) =>
    doc.paths['/api/v1/ext/patients'].get.responses['200'].content['application/json'].example.data[0];
  t.ok('display_name' in patients(documents.v2));
  t.notOk('display_name' in patients(documents.v1));
  t.equal(patients(documents.v1).full_name, patients(documents.v2).display_name);
});

const parameterOf = (doc: Node, own: Node): Node =>
  typeof own.$ref === 'string' ? doc.components.parameters[own.$ref.split('/').pop()!] : own;
const sampleValue = (parameter: Node): unknown =>
  parameter.example ??
  Object.values<Node>(parameter.examples ?? {})[0]?.value ??
  parameter.schema?.example ??
  parameter.schema?.default;

t.test(
  'every parameter a code sample sends has an example its schema accepts (no empty idempotency-key or id to paste)',
  async (t) => {
    for (const [name, doc] of Object.entries(documents)) {
      const ajv = new Ajv2020({ strict: false, allErrors: true });
      addFormats.default(ajv);
      for (const item of Object.values<Node>(doc.paths)) {
        for (const method of METHODS.filter((m) => item[m])) {
          const operation = item[method];
          for (const parameter of [...(item.parameters ?? []), ...(operation.parameters ?? [])].map((own: Node) =>
            parameterOf(doc, own),
          )) {
            const where = `${name}: ${operation.operationId} ${parameter.in} ${parameter.name}`;
            const value = sampleValue(parameter);
            if (value === undefined) {
              t.notOk(parameter.required, `${where} is required, so its sample needs an example`);
              continue;
            }
            const validate = ajv.compile(parameter.schema);
            t.ok(validate(value), `${where}: ${JSON.stringify(value)} ${ajv.errorsText(validate.errors)}`);
          }
        }
      }
    }
  },
);
