import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { versionDocument } from '../../src/docs/contract-documents.js';
import { readProjectFile } from '../../src/project-files.js';
import { atPointer, pointerToken } from '../../src/shared/json-pointer.js';

type Document = Record<string, any>;

const source: Document = JSON.parse(readProjectFile('openapi.json'));

/**
 * Validators of the published document of a contract version (the one served at /platform/api/vN/openapi.json),
 * so that a test checks a response against what a client generated from that document expects, not against
 * codegen's own reading of openapi.json.
 */
export function publishedContract(version: string) {
  const document = versionDocument(source, version);
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema(document, 'published');
  const compiled = new Map<string, ValidateFunction | undefined>();
  return function responseValidator(path: string, method: string, status: number): ValidateFunction | undefined {
    const key = `${method} ${path} ${status}`;
    if (!compiled.has(key)) {
      const own = `#/paths/${pointerToken(path)}/${method.toLowerCase()}/responses/${status}`;
      const ref = document.paths[path]?.[method.toLowerCase()]?.responses?.[String(status)]?.$ref;
      const pointer: string = typeof ref === 'string' ? ref : own;
      const response = atPointer(document, pointer) as Document | undefined;
      const media = Object.keys(response?.content ?? {}).find((type) => type.includes('json'));
      compiled.set(
        key,
        media ? ajv.compile({ $ref: `published${pointer}/content/${pointerToken(media)}/schema` }) : undefined,
      );
    }
    return compiled.get(key);
  };
}
