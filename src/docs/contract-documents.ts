import { toV1, v1Components, v1Shapes, schemaNameOf } from '../shared/contract-v1.js';
import { changelogSection } from './changelog.js';

/**
 * The documents a client is served, each derived from openapi.json (pure: the release script writes the same
 * documents as snapshots, the reference page serves them, tests validate responses against them):
 * - one document per contract version, pinned to it: version 2 as written, version 1 from the same `x-svc-since` and
 *   `x-svc-v1-name` marks the v1 serializer uses (src/shared/contract-v1.ts), its operations deprecated;
 * - the current document: the current version's, so that it too describes exactly the versions it lets a client send.
 */
type Node = Record<string, any>;

interface ContractVersionEntry {
  version: string;
  manifest_version: string;
  status: 'current' | 'deprecated';
  deprecated_at: string | null;
  successor: string | null;
  sunset?: string | null;
}

export const contractVersionsOf = (doc: Node): ContractVersionEntry[] => doc['x-svc-contract-versions'];

function contractVersionOf(doc: Node, version: string): ContractVersionEntry {
  const entry = contractVersionsOf(doc).find((v) => v.version === version);
  if (!entry) throw new Error(`contract version ${version} is not in x-svc-contract-versions`);
  return entry;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

function operationsOf(doc: Node): Node[] {
  return Object.values<Node>(doc.paths).flatMap((item) => METHODS.filter((m) => item[m]).map((m) => item[m]));
}

/** The version header of a pinned document accepts only its own version, and a client generated from it sends it. */
function pinVersionHeader(doc: Node, version: string, required: boolean): void {
  const parameter = doc.components.parameters.ContractVersion;
  parameter.required = required;
  parameter.schema = { type: 'string', enum: [version], default: version };
}

function pinnedDocument(doc: Node, version: ContractVersionEntry): Node {
  const copy = structuredClone(doc);
  copy.info.version = version.manifest_version;
  copy.info.title = `${doc.info.title} (contract version ${version.version})`;
  return copy;
}

function withoutVersionMarks(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutVersionMarks);
  if (!schema || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([key]) => key !== 'x-svc-since' && key !== 'x-svc-v1-name')
      .map(([key, value]) => [key, withoutVersionMarks(value)]),
  );
}

/** Response examples rewritten as version 1 serves them, so that they stay valid against the v1 schemas. */
function v1Examples(doc: Node, shapes: ReturnType<typeof v1Shapes>): void {
  for (const operation of operationsOf(doc)) {
    for (const response of Object.values<Node>(operation.responses ?? {})) {
      for (const media of Object.values<Node>(response.content ?? {})) {
        const schema = schemaNameOf(media.schema);
        if (!schema || !shapes[schema]) continue;
        if (media.example !== undefined) media.example = toV1(media.example, schema, shapes);
        for (const example of Object.values<Node>(media.examples ?? {})) {
          if (example.value !== undefined) example.value = toV1(example.value, schema, shapes);
        }
      }
    }
  }
}

function refsIn(node: unknown, found: Set<string>): Set<string> {
  if (Array.isArray(node)) for (const item of node) refsIn(item, found);
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith('#/components/schemas/'))
        found.add(value.split('/').pop()!);
      else refsIn(value, found);
    }
  }
  return found;
}

/** Drops the schemas that only properties absent in this version referred to (Catalog.contract_versions in v1). */
function withoutUnusedSchemas(doc: Node): void {
  const { schemas, ...otherComponents } = doc.components;
  const used = refsIn({ ...doc, components: otherComponents }, new Set());
  for (const name of used) refsIn(schemas[name], used); // the set grows while it is walked, so this reaches the closure
  doc.components.schemas = Object.fromEntries(Object.entries(schemas).filter(([name]) => used.has(name)));
}

function versionOneDocument(doc: Node, version: ContractVersionEntry): Node {
  const copy = pinnedDocument(doc, version);
  const shapes = v1Shapes(doc as never);
  copy.components.schemas = withoutVersionMarks(v1Components(doc as never));
  withoutUnusedSchemas(copy);
  v1Examples(copy, shapes);
  pinVersionHeader(copy, version.version, true);
  const sunset = version.sunset
    ? ` It is withdrawn after ${version.sunset} (Sunset header).`
    : ' No sunset date is set.';
  copy.info.description =
    `**Contract version ${version.version} is deprecated** (since ${version.deprecated_at}); its successor is version ${version.successor}.` +
    `${sunset} Every response of this version carries \`Deprecation\` (RFC 9745), \`Link: <…>; rel="successor-version"\` and a \`meta.deprecations\` entry. ` +
    `Send \`svc-contract-version: ${version.version}\` on every request to be served this document's shapes.\n\n${doc.info.description}`;
  for (const operation of operationsOf(copy)) operation.deprecated = true;
  return copy;
}

/** The schema that types the known error codes in published documents; it grows with x-svc-error-codes. */
export const KNOWN_ERROR_CODE = 'KnownErrorCode';

/**
 * The error `code` properties typed as one of the known codes or any other string: a generated client gets the
 * known codes as a type (openapi-typescript: `components["schemas"]["KnownErrorCode"] | string`), and a code
 * added later still validates. The codes come from x-svc-error-codes, so they are not written twice.
 */
function typedErrorCodes(doc: Node): Node {
  const copy = structuredClone(doc);
  // Published documents carry the changelog in their description, where the reference page shows it.
  copy.info.description = `${doc.info.description}\n\n${changelogSection(doc)}`;
  const table: Node[] = doc['x-svc-error-codes'];
  copy.components.schemas[KNOWN_ERROR_CODE] = {
    type: 'string',
    enum: table.map((entry) => entry.code),
    description:
      "Error codes known when this document was published (x-svc-error-codes gives each one's status, category and retryable). New codes may be added within a version: treat an unknown one by its category and retryable.",
  };
  const typed = (property: Node) => ({
    description: property.description,
    anyOf: [{ $ref: `#/components/schemas/${KNOWN_ERROR_CODE}` }, { type: 'string' }],
  });
  const platform = copy.components.schemas.ExternalPlatformError.properties.error.properties;
  platform.code = typed(platform.code);
  const api = copy.components.schemas.ApiError.properties;
  api.code = typed(api.code);
  return copy;
}

/** The document a client pinned to `version` is served (without servers: see withServer). */
export function versionDocument(doc: Node, version: string): Node {
  const entry = contractVersionOf(doc, version);
  if (entry.status === 'current') {
    const copy = pinnedDocument(typedErrorCodes(doc), entry);
    pinVersionHeader(copy, entry.version, false);
    return copy;
  }
  if (entry.version === '1') return versionOneDocument(typedErrorCodes(doc), entry);
  throw new Error(`no derivation is written for contract version ${version}`);
}

/**
 * The document served unversioned: the current version's document, which moves to the next version when that one
 * becomes current. Not both versions in one: a response schema cannot depend on the header that asked for it, so a
 * document allowing both would describe version 1's answers with version 2's shapes (or with a oneOf of both, which
 * leaves every generated type a union a client has to tell apart by hand).
 */
export function currentDocument(doc: Node): Node {
  const current = contractVersionsOf(doc).find((v) => v.status === 'current');
  if (!current) throw new Error('x-svc-contract-versions has no current version');
  return versionDocument(doc, current.version);
}

/**
 * The same document naming where it is served, so that generated clients need no base URL set by hand, and the
 * OAuth token URL absolute, as tools that fetch a token (the reference page's Test Request) need it.
 */
export function withServer(doc: Node, baseUrl: string): Node {
  const copy = structuredClone(doc);
  copy.servers = [{ url: baseUrl, description: 'This deployment (its public base URL).' }];
  for (const scheme of Object.values<Node>(copy.components.securitySchemes ?? {})) {
    for (const flow of Object.values<Node>(scheme.flows ?? {})) {
      if (typeof flow.tokenUrl === 'string' && flow.tokenUrl.startsWith('/'))
        flow.tokenUrl = `${baseUrl}${flow.tokenUrl}`;
    }
  }
  return copy;
}
