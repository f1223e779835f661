import { Ajv2020, _, type KeywordCxt } from 'ajv/dist/2020.js';
import standaloneModule from 'ajv/dist/standalone/index.js';
import formatsModule from 'ajv-formats';
import type { Json, JsonObject, OperationEntry, ParameterObject } from './contract-document.js';
import { GENERATED_HEADER } from './header.js';

// Both packages are CommonJS: under NodeNext the function is the module's `default` member.
const standaloneCode = standaloneModule.default;
const addFormats = formatsModule.default;

export type ValidatorSchemas = Record<string, JsonObject>;

/** Rewrites `#/components/schemas/X` to a registered components schema so each validator can be compiled alone. */
function relocateRefs(node: Json, componentsId = 'components'): Json {
  if (Array.isArray(node)) return node.map((n) => relocateRefs(n, componentsId));
  if (!node || typeof node !== 'object') return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    out[key] =
      key === '$ref' && typeof value === 'string' && value.startsWith('#/components/schemas/')
        ? value.replace('#/components/schemas/', `${componentsId}#/$defs/`)
        : relocateRefs(value, componentsId);
  }
  return out;
}

function vendorKeywords(node: Json, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const n of node) vendorKeywords(n, found);
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key.startsWith('x-')) found.add(key);
      vendorKeywords(value, found);
    }
  }
  return found;
}

/**
 * AJV coerces a query string such as "1e400" or "Infinity" to a non-finite number and then skips the numeric
 * keywords (its `minimum`/`maximum` checks run only on finite numbers) without checking the type again, so
 * `limit=1e400` passed as Infinity. This keyword, set by parameterSchema on every numeric parameter, runs after
 * coercion and refuses what JSON could never carry.
 */
const FINITE = 'finite';

function addFiniteKeyword(ajv: Ajv2020) {
  ajv.addKeyword({
    keyword: FINITE,
    schemaType: 'boolean',
    error: { message: 'must be a finite number' },
    code(cxt: KeywordCxt) {
      cxt.fail(_`typeof ${cxt.data} == "number" && !isFinite(${cxt.data})`);
    },
  });
}

/**
 * Precompiles validators to standalone ESM. `coerce` is for path, query and header values, which
 * arrive as strings: they are converted to the declared type (and defaults applied) on purpose.
 * Bodies and responses are checked as sent, with no coercion and no removal of properties.
 */
export function compileValidators(doc: JsonObject, schemas: ValidatorSchemas, coerce: boolean): string {
  const components = (doc.components as JsonObject).schemas as JsonObject;
  const ajv = new Ajv2020({
    code: { source: true, esm: true, lines: true },
    allErrors: true,
    strict: true,
    strictTypes: false,
    strictRequired: false,
    coerceTypes: coerce,
    useDefaults: coerce,
  });
  addFormats(ajv, ['date', 'date-time', 'uri', 'email']);
  if (coerce) addFiniteKeyword(ajv);
  for (const keyword of vendorKeywords(components)) ajv.addKeyword({ keyword });
  ajv.addSchema({ $id: 'components', $defs: relocateRefs(components) as JsonObject });
  const exportNames: Record<string, string> = {};
  for (const [name, schema] of Object.entries(schemas)) {
    ajv.addSchema(relocateRefs(schema) as JsonObject, name);
    exportNames[name] = name;
  }
  const code = standaloneCode(ajv, exportNames)
    // AJV's ESM output still calls require() for its runtime helpers and formats.
    .replace(
      /^"use strict";/,
      '"use strict";import { createRequire } from "node:module";const require = createRequire(import.meta.url);',
    );
  return `${GENERATED_HEADER}\n// @ts-nocheck\n/* eslint-disable */\n${code}\n`;
}

const isNumeric = (type: Json | undefined) => [type].flat().some((t) => t === 'integer' || t === 'number');

/**
 * A numeric parameter gets the finite keyword, and must declare both bounds: an unbounded integer reaches SQL
 * out of range (a 500) or beyond 2^53, where it is no longer the number sent.
 */
function boundedNumber(entry: OperationEntry, parameter: ParameterObject): JsonObject {
  const { schema } = parameter;
  if (!isNumeric(schema.type)) return schema;
  if (typeof schema.minimum !== 'number' || typeof schema.maximum !== 'number') {
    throw new Error(`${entry.operationId}: numeric parameter "${parameter.name}" needs a minimum and a maximum`);
  }
  return { ...schema, [FINITE]: true };
}

export function parameterSchema(entry: OperationEntry, location: 'path' | 'query' | 'header'): JsonObject | undefined {
  const params = entry.parameters.filter((p) => p.in === location);
  if (params.length === 0) return undefined;
  const key = (name: string) => (location === 'header' ? name.toLowerCase() : name);
  const properties: JsonObject = {};
  for (const p of params) properties[key(p.name)] = boundedNumber(entry, p);
  return {
    type: 'object',
    properties,
    required: params.filter((p) => p.required).map((p) => key(p.name)),
    // Unknown query parameters are refused (as Stripe does); headers are open by nature.
    additionalProperties: location === 'header',
  };
}
