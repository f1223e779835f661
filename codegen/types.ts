import openapiTS, { astToString } from 'openapi-typescript';
import type { JsonObject } from './contract-document.js';
import { GENERATED_HEADER } from './header.js';

/** Request and response types for every operation and schema, via openapi-typescript. */
export async function generateTypes(doc: JsonObject): Promise<string> {
  const ast = await openapiTS(doc as never, { alphabetize: false, exportType: true });
  return `${GENERATED_HEADER}\n${astToString(ast)}`;
}
