import { resolve, type Json, type JsonObject, type OperationEntry } from './contract-document.js';

const FIELD_MARKS = ['x-svc-shape', 'deprecated', 'x-svc-successor'];

/** What the request-shape rules read of a body: each field's marks and, for a field that may hold an object, its field names. */
export interface RequestFields {
  fields: Record<string, JsonObject>;
  objectFields: Record<string, string[]>;
}

function bodySchema(doc: JsonObject, entry: OperationEntry): JsonObject {
  const body = resolve(doc, entry.operation.requestBody as Json) as JsonObject;
  return resolve(doc, ((body.content as JsonObject)['application/json'] as JsonObject).schema as Json) as JsonObject;
}

/** The object schema a field holds, directly or as one of its alternatives. */
function objectSchemaOf(doc: JsonObject, field: JsonObject): JsonObject | undefined {
  const candidates = [field, ...((field.oneOf ?? field.anyOf ?? []) as JsonObject[])];
  return candidates.map((c) => resolve(doc, c) as JsonObject).find((s) => s.properties !== undefined);
}

function requestFieldsOf(doc: JsonObject, entry: OperationEntry): RequestFields {
  const properties = bodySchema(doc, entry).properties as Record<string, JsonObject>;
  const fields: Record<string, JsonObject> = {};
  const objectFields: Record<string, string[]> = {};
  for (const [name, field] of Object.entries(properties)) {
    fields[name] = Object.fromEntries(
      FIELD_MARKS.filter((mark) => field[mark] !== undefined).map((mark) => [mark, field[mark]]),
    );
    const object = objectSchemaOf(doc, field);
    if (object) objectFields[name] = Object.keys(object.properties as JsonObject);
  }
  return { fields, objectFields };
}

/** For each operation with request shapes (x-svc-request-shapes): its body's fields, read once here instead of from openapi.json at run time. */
export function requestFields(doc: JsonObject, operations: OperationEntry[]): Record<string, RequestFields> {
  const shaped = Object.keys(doc['x-svc-request-shapes'] as JsonObject);
  return Object.fromEntries(
    operations.filter((e) => shaped.includes(e.operationId)).map((e) => [e.operationId, requestFieldsOf(doc, e)]),
  );
}
