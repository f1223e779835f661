import t from 'tap';
import { currentDocument, KNOWN_ERROR_CODE, versionDocument } from '../../src/docs/contract-documents.js';
import { readProjectFile } from '../../src/project-files.js';

type Node = Record<string, any>;
const source: Node = JSON.parse(readProjectFile('openapi.json'));
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const operations = Object.values<Node>(source.paths).flatMap((item) =>
  METHODS.filter((m) => item[m]).map((m) => item[m]),
);

t.test('the oauth2 scheme lists exactly the scopes the operations require (x-svc-scope)', async (t) => {
  const required = new Set(operations.map((op) => op['x-svc-scope']).filter(Boolean));
  const listed = Object.keys(source.components.securitySchemes.oauth2.flows.clientCredentials.scopes);
  t.same(listed.sort(), [...required].sort());
  t.same(
    source.security,
    [{ bearerAuth: [] }, { oauth2: [] }],
    'either a bearer token or one the client fetches itself',
  );
});

t.test(
  'published documents type the known error codes from x-svc-error-codes, and still admit any other code',
  async (t) => {
    const codes = source['x-svc-error-codes'].map((entry: Node) => entry.code);
    for (const doc of [currentDocument(source), versionDocument(source, '1'), versionDocument(source, '2')]) {
      t.same(doc.components.schemas[KNOWN_ERROR_CODE].enum, codes);
      const typed = { anyOf: [{ $ref: `#/components/schemas/${KNOWN_ERROR_CODE}` }, { type: 'string' }] };
      t.match(doc.components.schemas.ApiError.properties.code, typed);
      t.match(doc.components.schemas.ExternalPlatformError.properties.error.properties.code, typed);
    }
  },
);

// runQuery and createQueryToken belong to the governed-queries work in progress, which adds their 415.
const PENDING_415 = new Set(['runQuery', 'createQueryToken']);

t.test('every operation that takes a body declares 415, and the token endpoint the ten common statuses', async (t) => {
  for (const op of operations.filter((o) => o.requestBody && !PENDING_415.has(o.operationId)))
    t.ok(op.responses['415'], `${op.operationId} declares 415`);
  const token = source.paths['/api/v1/oauth/token'].post.responses;
  for (const status of ['400', '401', '402', '403', '404', '409', '429', '500', '503', '504'])
    t.ok(token[status], `issueToken declares ${status}`);
  t.equal(
    source.components.parameters.ContractVersion.schema.default,
    '2',
    'the version header defaults to the current version',
  );
});
