type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/**
 * Version 1 is derived from the document (by codegen, the v1 serializer, the published v1 document and the released
 * snapshots alike): properties marked `x-svc-since: "2"` do not exist in v1,
 * and properties with `x-svc-v1-name` had that name. Nothing about v1 is written twice.
 */
export interface V1Shape {
  omit: string[];
  rename: Record<string, string>;
  children: Record<string, string>;
}

export const refName = (node: JsonObject): string | undefined =>
  typeof node.$ref === 'string' ? node.$ref.split('/').pop() : undefined;

/** The component schema a property's values are made of, through arrays and oneOf/anyOf/allOf. */
export function schemaNameOf(node: Json): string | undefined {
  if (!node || typeof node !== 'object' || Array.isArray(node)) return undefined;
  const direct = refName(node);
  if (direct) return direct;
  if (node.items) return schemaNameOf(node.items);
  for (const key of ['oneOf', 'anyOf', 'allOf']) {
    const found = ((node[key] ?? []) as Json[]).map(schemaNameOf).find(Boolean);
    if (found) return found;
  }
  return undefined;
}

/** Object parts of a schema: itself and its allOf members, resolved. */
function objectParts(schemas: JsonObject, schema: JsonObject): JsonObject[] {
  const parts = ((schema.allOf ?? []) as JsonObject[]).flatMap((part) => {
    const name = refName(part);
    return objectParts(schemas, name ? (schemas[name] as JsonObject) : part);
  });
  return schema.properties ? [schema, ...parts] : parts;
}

function ownShape(schemas: JsonObject, schema: JsonObject): V1Shape {
  const shape: V1Shape = { omit: [], rename: {}, children: {} };
  for (const part of objectParts(schemas, schema)) {
    for (const [prop, node] of Object.entries(part.properties as JsonObject)) {
      const property = node as JsonObject;
      if (property['x-svc-since'] === '2') shape.omit.push(prop);
      if (typeof property['x-svc-v1-name'] === 'string') shape.rename[prop] = property['x-svc-v1-name'];
      const child = schemaNameOf(property);
      if (child) shape.children[prop] = child;
    }
  }
  return shape;
}

/** Shapes of every schema whose v1 form differs somewhere below it; other children are dropped. */
export function v1Shapes(doc: JsonObject): Record<string, V1Shape> {
  const schemas = (doc.components as JsonObject).schemas as JsonObject;
  const memo = new Map<string, V1Shape | null>();
  const differs = (name: string): V1Shape | null => {
    if (memo.has(name)) return memo.get(name)!;
    memo.set(name, null);
    const shape = ownShape(schemas, schemas[name] as JsonObject);
    shape.children = Object.fromEntries(Object.entries(shape.children).filter(([, child]) => differs(child)));
    const result =
      shape.omit.length || Object.keys(shape.rename).length || Object.keys(shape.children).length ? shape : null;
    memo.set(name, result);
    return result;
  };
  return Object.fromEntries(Object.keys(schemas).flatMap((name) => (differs(name) ? [[name, differs(name)!]] : [])));
}

/** The component schemas as version 1 had them, for validating v1 responses. */
export function v1Components(doc: JsonObject): JsonObject {
  const schemas = (doc.components as JsonObject).schemas as JsonObject;
  const out: JsonObject = {};
  for (const [name, node] of Object.entries(schemas)) out[name] = v1Schema(node as JsonObject);
  return out;
}

function v1Schema(schema: JsonObject): JsonObject {
  const copy: JsonObject = { ...schema };
  if (schema.allOf) copy.allOf = (schema.allOf as JsonObject[]).map(v1Schema);
  if (!schema.properties) return copy;
  const properties: JsonObject = {};
  const names = new Map<string, string>();
  for (const [prop, node] of Object.entries(schema.properties as JsonObject)) {
    const property = node as JsonObject;
    if (property['x-svc-since'] === '2') continue;
    const name = typeof property['x-svc-v1-name'] === 'string' ? property['x-svc-v1-name'] : prop;
    names.set(prop, name);
    properties[name] = property;
  }
  copy.properties = properties;
  if (Array.isArray(schema.required))
    copy.required = (schema.required as string[]).filter((r) => names.has(r)).map((r) => names.get(r)!);
  return copy;
}

/** A version 2 value as version 1 serves it, by the shapes of v1Shapes (or the generated table of them). */
type V1Shapes = Readonly<
  Record<
    string,
    { omit: readonly string[]; rename: Readonly<Record<string, string>>; children: Readonly<Record<string, string>> }
  >
>;

export function toV1(value: unknown, schema: string, shapes: V1Shapes): unknown {
  const shape = shapes[schema];
  if (!shape || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => toV1(item, schema, shapes));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (shape.omit.includes(key)) continue;
    const child = shape.children[key];
    out[shape.rename[key] ?? key] = child ? toV1(item, child, shapes) : item;
  }
  return out;
}
