/**
 * One fixture pair per rule of the breaking-change gate, named after oasdiff's check ids
 * (github.com/oasdiff/oasdiff, docs/BREAKING-CHANGES-EXAMPLES.md) or, for the document's own tables, after
 * the extension. Each fixture changes a copy of one template path; `breaking` says what the gate must decide.
 */
type Node = Record<string, any>;

export interface Fixture {
  rule: string;
  breaking: boolean;
  /** The change is to a document-wide table rather than to the fixture's path. */
  document?: true;
  /** Changes the fixture's own copy of the template path item (or, for document-wide rules, the document). */
  change(item: Node, doc: Node): void;
}

/** A list with a filter, a response header and an object item, and a command with a body: every place a rule looks at. */
export function templatePathItem(id: string): Node {
  return {
    get: {
      operationId: `list_${id}`,
      summary: 'List items',
      'x-svc-scope': 'external:items:read',
      'x-svc-no-phi': 'allowed',
      'x-svc-command': false,
      'x-svc-capability': null,
      parameters: [
        { name: 'status', in: 'query', required: false, schema: { type: 'string', enum: ['open', 'closed'] } },
        {
          name: 'limit',
          in: 'query',
          required: false,
          schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
        },
        { name: 'code', in: 'query', required: false, schema: { type: 'string', maxLength: 20 } },
      ],
      responses: {
        '200': {
          description: 'The items.',
          headers: { 'x-page-count': { required: true, schema: { type: 'integer' } } },
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['id', 'kind'],
                properties: {
                  id: { type: 'string', maxLength: 40 },
                  kind: { type: 'string', enum: ['visit', 'call'] },
                  count: { type: 'integer', minimum: 0 },
                  note: { type: 'string', 'x-svc-phi': 'null' },
                },
              },
            },
          },
        },
        '404': { description: 'Not found.' },
      },
    },
    post: {
      operationId: `create_${id}`,
      summary: 'Create an item',
      'x-svc-scope': null,
      'x-svc-no-phi': 'denied',
      'x-svc-command': true,
      'x-svc-capability': 'items.create',
      requestBody: {
        required: false,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['title'],
              properties: {
                title: { type: 'string', maxLength: 100 },
                priority: { type: 'string', enum: ['low', 'high'] },
                due: { type: 'string', format: 'date' },
                size: { type: 'number' },
              },
            },
          },
        },
      },
      responses: { '200': { description: 'Created.' } },
    },
  };
}

export function templateDocument(): Node {
  return {
    openapi: '3.1.0',
    info: { title: 'Gate fixtures', version: '1.0.0' },
    servers: [{ url: 'http://127.0.0.1:3000' }],
    security: [{ bearer: [] }],
    paths: {},
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' }, mtls: { type: 'mutualTLS' } } },
    'x-svc-error-codes': [
      { code: 'PLATFORM_RESOURCE_NOT_FOUND', status: 404, category: 'not_found', retryable: false, terminal: true },
      { code: 'PLATFORM_RATE_LIMITED', status: 429, category: 'limits', retryable: true, terminal: false },
    ],
    'x-svc-request-shapes': { create_shapes: [{ shape: '2026-04-01', status: 'current' }] },
  };
}

const list = (item: Node) => item.get;
const create = (item: Node) => item.post;
const param = (item: Node, name: string) => list(item).parameters.find((p: Node) => p.name === name);
const responseSchema = (item: Node) => list(item).responses['200'].content['application/json'].schema;
const bodySchema = (item: Node) => create(item).requestBody.content['application/json'].schema;

/** Records in `x-svc-no-phi-fixes` a reduction of the count of the fixture's path (named by its rule, as the gate test lays it). */
function recordFix(doc: Node, rule: string, mark: string): void {
  const pointer = `#/paths/~1${rule}/get/responses/200/content/application~1json/schema/properties/count`;
  (doc['x-svc-no-phi-fixes'] ??= []).push({ pointer, 'x-svc-phi': mark });
}

export const fixtures: Fixture[] = [
  // Paths, operations, parameters
  {
    rule: 'api-path-removed-without-deprecation',
    breaking: true,
    change: (item) => {
      delete item.get;
      delete item.post;
    },
  },
  {
    rule: 'api-removed-without-deprecation',
    breaking: true,
    change: (item) => {
      delete item.post;
    },
  },
  {
    rule: 'api-operation-id-removed',
    breaking: true,
    change: (item) => {
      list(item).operationId += '_renamed';
    },
  },
  {
    rule: 'request-parameter-removed',
    breaking: true,
    change: (item) => {
      list(item).parameters.splice(0, 1);
    },
  },
  {
    rule: 'new-required-request-parameter',
    breaking: true,
    change: (item) => {
      list(item).parameters.push({ name: 'agency', in: 'query', required: true, schema: { type: 'string' } });
    },
  },
  {
    rule: 'request-parameter-became-required',
    breaking: true,
    change: (item) => {
      param(item, 'status').required = true;
    },
  },
  {
    rule: 'request-parameter-type-changed',
    breaking: true,
    change: (item) => {
      param(item, 'code').schema.type = 'integer';
    },
  },
  {
    rule: 'request-parameter-enum-value-removed',
    breaking: true,
    change: (item) => {
      param(item, 'status').schema.enum = ['open'];
    },
  },
  {
    rule: 'request-parameter-pattern-added',
    breaking: true,
    change: (item) => {
      param(item, 'code').schema.pattern = '^[A-Z]+$';
    },
  },
  {
    rule: 'request-parameter-max-decreased',
    breaking: true,
    change: (item) => {
      param(item, 'limit').schema.maximum = 100;
    },
  },
  {
    rule: 'request-parameter-min-increased',
    breaking: true,
    change: (item) => {
      param(item, 'limit').schema.minimum = 10;
    },
  },
  {
    rule: 'request-parameter-max-length-decreased',
    breaking: true,
    change: (item) => {
      param(item, 'code').schema.maxLength = 10;
    },
  },
  {
    rule: 'request-parameter-default-value-changed',
    breaking: true,
    change: (item) => {
      param(item, 'limit').schema.default = 20;
    },
  },
  // Request bodies
  {
    rule: 'request-body-became-required',
    breaking: true,
    change: (item) => {
      create(item).requestBody.required = true;
    },
  },
  {
    rule: 'new-required-request-property',
    breaking: true,
    change: (item) => {
      bodySchema(item).properties.owner = { type: 'string' };
      bodySchema(item).required.push('owner');
    },
  },
  {
    rule: 'request-property-became-required',
    breaking: true,
    change: (item) => {
      bodySchema(item).required.push('priority');
    },
  },
  {
    rule: 'request-property-type-changed',
    breaking: true,
    change: (item) => {
      bodySchema(item).properties.size.type = 'string';
    },
  },
  {
    rule: 'request-property-format-changed',
    breaking: true,
    change: (item) => {
      bodySchema(item).properties.due.format = 'date-time';
    },
  },
  {
    rule: 'request-property-enum-value-removed',
    breaking: true,
    change: (item) => {
      bodySchema(item).properties.priority.enum = ['low'];
    },
  },
  {
    rule: 'request-property-became-enum',
    breaking: true,
    change: (item) => {
      bodySchema(item).properties.title.enum = ['a', 'b'];
    },
  },
  {
    rule: 'request-property-max-length-decreased',
    breaking: true,
    change: (item) => {
      bodySchema(item).properties.title.maxLength = 50;
    },
  },
  {
    rule: 'request-body-media-type-removed',
    breaking: true,
    change: (item) => {
      const content = create(item).requestBody.content;
      content['application/x-www-form-urlencoded'] = content['application/json'];
      delete content['application/json'];
    },
  },
  // Responses
  {
    rule: 'response-success-status-removed',
    breaking: true,
    change: (item) => {
      list(item).responses['201'] = list(item).responses['200'];
      delete list(item).responses['200'];
    },
  },
  {
    rule: 'response-non-success-status-removed',
    breaking: true,
    change: (item) => {
      delete list(item).responses['404'];
    },
  },
  {
    rule: 'response-required-property-removed',
    breaking: true,
    change: (item) => {
      delete responseSchema(item).properties.kind;
      responseSchema(item).required = ['id'];
    },
  },
  {
    rule: 'response-optional-property-removed',
    breaking: true,
    change: (item) => {
      delete responseSchema(item).properties.count;
    },
  },
  {
    rule: 'response-property-became-optional',
    breaking: true,
    change: (item) => {
      responseSchema(item).required = ['id'];
    },
  },
  {
    rule: 'response-property-became-nullable',
    breaking: true,
    change: (item) => {
      responseSchema(item).properties.kind.type = ['string', 'null'];
      responseSchema(item).properties.kind.enum.push(null);
    },
  },
  {
    rule: 'response-property-became-nullable (anyOf null)',
    breaking: true,
    change: (item) => {
      responseSchema(item).properties.count = { anyOf: [{ type: 'integer', minimum: 0 }, { type: 'null' }] };
    },
  },
  {
    rule: 'response-property-type-changed',
    breaking: true,
    change: (item) => {
      responseSchema(item).properties.count.type = 'string';
    },
  },
  {
    rule: 'response-property-enum-value-added',
    breaking: true,
    change: (item) => {
      responseSchema(item).properties.kind.enum.push('fax');
    },
  },
  {
    rule: 'response-property-max-length-increased',
    breaking: true,
    change: (item) => {
      responseSchema(item).properties.id.maxLength = 80;
    },
  },
  {
    rule: 'response-media-type-removed',
    breaking: true,
    change: (item) => {
      const content = list(item).responses['200'].content;
      content['text/csv'] = content['application/json'];
      delete content['application/json'];
    },
  },
  {
    rule: 'required-response-header-removed',
    breaking: true,
    change: (item) => {
      delete list(item).responses['200'].headers;
    },
  },
  // Security
  {
    rule: 'api-security-added',
    breaking: true,
    change: (item) => {
      list(item).security = [{ bearer: [], mtls: [] }];
    },
  },
  // The document's own tables, which no generic diff reads
  {
    rule: 'x-svc-scope-tightened',
    breaking: true,
    change: (item) => {
      list(item)['x-svc-scope'] = 'external:items:admin';
    },
  },
  {
    rule: 'x-svc-scope-added',
    breaking: true,
    change: (item) => {
      create(item)['x-svc-scope'] = 'external:items:write';
    },
  },
  {
    rule: 'x-svc-no-phi-tightened',
    breaking: true,
    change: (item) => {
      list(item)['x-svc-no-phi'] = 'pseudonymized';
    },
  },
  {
    rule: 'x-svc-command-added',
    breaking: true,
    change: (item) => {
      list(item)['x-svc-command'] = true;
    },
  },
  {
    rule: 'x-svc-capability-required',
    breaking: true,
    change: (item) => {
      list(item)['x-svc-capability'] = 'items.list';
    },
  },
  {
    rule: 'x-svc-phi-reduction-added',
    breaking: true,
    change: (item) => {
      responseSchema(item).properties.count['x-svc-phi'] = 'null';
    },
  },
  {
    rule: 'x-svc-phi-reduction-added-other-than-recorded',
    breaking: true,
    change: (item, doc) => {
      responseSchema(item).properties.count['x-svc-phi'] = 'withheld';
      recordFix(doc, 'x-svc-phi-reduction-added-other-than-recorded', 'year');
    },
  },
  {
    rule: 'x-svc-error-codes-status-changed',
    breaking: true,
    document: true,
    change: (_item, doc) => {
      doc['x-svc-error-codes'][0].status = 410;
    },
  },
  {
    rule: 'x-svc-error-codes-retryable-changed',
    breaking: true,
    document: true,
    change: (_item, doc) => {
      doc['x-svc-error-codes'][1].retryable = false;
    },
  },
  {
    rule: 'x-svc-error-codes-code-removed',
    breaking: true,
    document: true,
    change: (_item, doc) => {
      doc['x-svc-error-codes'].pop();
    },
  },
  {
    rule: 'x-svc-request-shapes-shape-removed',
    breaking: true,
    document: true,
    change: (_item, doc) => {
      doc['x-svc-request-shapes'].create_shapes = [];
    },
  },

  // Compatible changes the gate must let through
  {
    rule: 'endpoint-added',
    breaking: false,
    change: (item) => {
      item.put = { ...structuredClone(create(item)), operationId: `${create(item).operationId}_put` };
    },
  },
  {
    rule: 'new-optional-request-parameter',
    breaking: false,
    change: (item) => {
      list(item).parameters.push({
        name: 'since',
        in: 'query',
        required: false,
        schema: { type: 'string', format: 'date' },
      });
    },
  },
  {
    rule: 'request-parameter-enum-value-added',
    breaking: false,
    change: (item) => {
      param(item, 'status').schema.enum.push('archived');
    },
  },
  {
    rule: 'request-parameter-max-increased',
    breaking: false,
    change: (item) => {
      param(item, 'limit').schema.maximum = 500;
    },
  },
  {
    rule: 'request-parameter-max-length-removed',
    breaking: false,
    change: (item) => {
      delete param(item, 'code').schema.maxLength;
    },
  },
  {
    rule: 'new-optional-request-property',
    breaking: false,
    change: (item) => {
      bodySchema(item).properties.tags = { type: 'array', items: { type: 'string' } };
    },
  },
  {
    rule: 'request-property-enum-value-added',
    breaking: false,
    change: (item) => {
      bodySchema(item).properties.priority.enum.push('urgent');
    },
  },
  {
    rule: 'request-property-became-optional',
    breaking: false,
    change: (item) => {
      bodySchema(item).required = [];
    },
  },
  {
    rule: 'response-optional-property-added',
    breaking: false,
    change: (item) => {
      responseSchema(item).properties.office = { type: 'string' };
    },
  },
  {
    rule: 'response-property-became-required',
    breaking: false,
    change: (item) => {
      responseSchema(item).required.push('count');
    },
  },
  {
    rule: 'response-non-success-status-added',
    breaking: false,
    change: (item) => {
      list(item).responses['429'] = { description: 'Rate limited.' };
    },
  },
  {
    rule: 'response-media-type-added',
    breaking: false,
    change: (item) => {
      list(item).responses['200'].content['text/csv'] = { schema: { type: 'string' } };
    },
  },
  {
    rule: 'description-and-example-changed',
    breaking: false,
    change: (item) => {
      list(item).description = 'Now described.';
      responseSchema(item).properties.id.example = 'it_1';
      responseSchema(item).properties.id.description = 'The id.';
    },
  },
  {
    rule: 'api-deprecated',
    breaking: false,
    change: (item) => {
      list(item).deprecated = true;
    },
  },
  {
    rule: 'x-svc-scope-loosened',
    breaking: false,
    change: (item) => {
      list(item)['x-svc-scope'] = null;
    },
  },
  {
    rule: 'x-svc-no-phi-loosened',
    breaking: false,
    change: (item) => {
      create(item)['x-svc-no-phi'] = 'allowed';
    },
  },
  {
    rule: 'x-svc-command-removed',
    breaking: false,
    change: (item) => {
      create(item)['x-svc-command'] = false;
    },
  },
  {
    rule: 'x-svc-phi-kept-mark-added',
    breaking: false,
    change: (item) => {
      responseSchema(item).properties.count['x-svc-phi'] = 'kept';
    },
  },
  {
    rule: 'x-svc-phi-reduction-became-kept',
    breaking: false,
    change: (item) => {
      responseSchema(item).properties.note['x-svc-phi'] = 'kept';
    },
  },
  {
    rule: 'response-property-added-with-reduction',
    breaking: false,
    change: (item) => {
      responseSchema(item).properties.born = { type: 'string', format: 'date', 'x-svc-phi': 'year' };
    },
  },
  {
    rule: 'x-svc-phi-reduction-added-as-recorded-fix',
    breaking: false,
    change: (item, doc) => {
      responseSchema(item).properties.count['x-svc-phi'] = 'withheld';
      recordFix(doc, 'x-svc-phi-reduction-added-as-recorded-fix', 'withheld');
    },
  },
  {
    rule: 'x-svc-phi-handle-marked-on-parameter',
    breaking: false,
    change: (item) => {
      list(item).parameters[2]['x-svc-phi'] = { reduce: 'handle', kind: 'physician' };
    },
  },
  {
    rule: 'x-svc-phi-reduction-removed',
    breaking: false,
    change: (item) => {
      delete responseSchema(item).properties.note['x-svc-phi'];
    },
  },
  {
    rule: 'x-svc-error-codes-code-added',
    breaking: false,
    document: true,
    change: (_item, doc) => {
      doc['x-svc-error-codes'].push({
        code: 'PLATFORM_NEW',
        status: 409,
        category: 'conflict',
        retryable: false,
        terminal: true,
      });
    },
  },
  {
    rule: 'x-svc-error-codes-description-changed',
    breaking: false,
    document: true,
    change: (_item, doc) => {
      doc['x-svc-error-codes'][0].description = 'Reworded.';
    },
  },
  {
    rule: 'x-svc-request-shapes-shape-deprecated',
    breaking: false,
    document: true,
    change: (_item, doc) => {
      doc['x-svc-request-shapes'].create_shapes = [
        { shape: '2026-04-01', status: 'deprecated', successor: '2026-08-19' },
        { shape: '2026-08-19', status: 'current' },
      ];
    },
  },
];
