import { readFileSync } from 'node:fs';
import { atPointer } from '../src/shared/json-pointer.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface ParameterObject extends JsonObject {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  schema: JsonObject;
}

export interface OperationEntry {
  operationId: string;
  method: string;
  path: string;
  operation: JsonObject;
  parameters: ParameterObject[];
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

export function readDocument(path: string): JsonObject {
  return JSON.parse(readFileSync(path, 'utf8')) as JsonObject;
}

/** Follows one local `$ref` (`#/a/b/c`) inside the document. */
export function resolve<T extends Json>(doc: JsonObject, node: T): T {
  if (node && typeof node === 'object' && !Array.isArray(node) && typeof node.$ref === 'string') {
    return resolve(doc, atPointer(doc, node.$ref) as T);
  }
  return node;
}

/** Every operation in document order, with path-level and operation-level parameters merged. */
export function listOperations(doc: JsonObject): OperationEntry[] {
  const entries: OperationEntry[] = [];
  for (const [path, item] of Object.entries(doc.paths as JsonObject)) {
    const pathItem = item as JsonObject;
    const shared = ((pathItem.parameters ?? []) as Json[]).map((p) => resolve(doc, p) as ParameterObject);
    for (const method of HTTP_METHODS) {
      const operation = pathItem[method] as JsonObject | undefined;
      if (!operation) continue;
      const own = ((operation.parameters ?? []) as Json[]).map((p) => resolve(doc, p) as ParameterObject);
      const byKey = new Map([...shared, ...own].map((p) => [`${p.in}:${p.name}`, p]));
      entries.push({
        operationId: operation.operationId as string,
        method: method.toUpperCase(),
        path,
        operation,
        parameters: [...byKey.values()],
      });
    }
  }
  return entries;
}

export function responseRefName(node: Json): string | undefined {
  const ref = (node as JsonObject).$ref;
  return typeof ref === 'string' && ref.startsWith('#/components/responses/') ? ref.split('/').pop() : undefined;
}
