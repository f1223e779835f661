import { z } from 'zod';
import { readProjectFile } from '../project-files.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const components = (JSON.parse(readProjectFile('openapi.json')) as { components: { schemas: Record<string, Json> } })
  .components.schemas;

/** A schema with its local $refs inlined, without the contract's x- keywords (they describe REST versions and PHI plans, not a tool's output). */
function inlined(node: Json): Json {
  if (Array.isArray(node)) return node.map(inlined);
  if (node === null || typeof node !== 'object') return node;
  if (typeof node.$ref === 'string') return inlined(components[node.$ref.replace('#/components/schemas/', '')]);
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key]) => !key.startsWith('x-'))
      .map(([key, value]) => [key, inlined(value)]),
  );
}

/** A component of openapi.json as zod: a tool that answers with the route's own objects declares the route's own shape. */
export function contractSchema(name: string): z.ZodType {
  if (!(name in components)) throw new Error(`openapi.json has no schema ${name}`);
  return z.fromJSONSchema(inlined(components[name]) as Parameters<typeof z.fromJSONSchema>[0]);
}
