import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { versionDocument } from '../../src/docs/contract-documents.js';
import { readProjectFile } from '../../src/project-files.js';

type Document = Record<string, any>;

const source: Document = JSON.parse(readProjectFile('openapi.json'));
const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

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
      const own = `#/paths/${escape(path)}/${method.toLowerCase()}/responses/${status}`;
      const ref = document.paths[path]?.[method.toLowerCase()]?.responses?.[String(status)]?.$ref;
      const pointer: string = typeof ref === 'string' ? ref : own;
      const response = pointer.slice(2).split('/').reduce((at: Document | undefined, key) => at?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], document);
      const media = Object.keys(response?.content ?? {}).find((type) => type.includes('json'));
      compiled.set(key, media ? ajv.compile({ $ref: `published${pointer}/content/${escape(media)}/schema` }) : undefined);
    }
    return compiled.get(key);
  };
}
