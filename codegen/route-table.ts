import { resolve, responseRefName, type Json, type JsonObject, type OperationEntry } from './contract-document.js';
import { parameterSchema, type ValidatorSchemas } from './validators.js';
import { GENERATED_HEADER } from './header.js';
import type { V1Shape } from '../src/shared/contract-v1.js';
import type { SchemaPlan } from './no-phi-plan.js';
import type { RequestFields } from './request-fields.js';
import type { HandleParameter } from './handle-parameters.js';
import { generateWebhookTable, type WebhookEntry } from './webhooks.js';

export interface ValidatorPlan {
  parameters: ValidatorSchemas;
  bodies: ValidatorSchemas;
}

export const ERROR_SHAPES = ['ApiError', 'ExternalPlatformError'];

const LOCATIONS = { params: 'path', query: 'query', headers: 'header' } as const;

function jsonSchemaOf(doc: JsonObject, response: Json): JsonObject | undefined {
  const content = (resolve(doc, response) as JsonObject).content as JsonObject | undefined;
  const json = content?.['application/json'] as JsonObject | undefined;
  return json?.schema as JsonObject | undefined;
}

function responseValidatorName(entry: OperationEntry, status: string, response: Json): string {
  const shared = responseRefName(response);
  return shared ? `response${shared}` : `${entry.operationId}Status${status}`;
}

/** The resource type its tag names (x-svc-resource-type), written on its audit records; null for Platform and OAuth. */
function resourceTypeOf(doc: JsonObject, tag: string): string | null {
  const entry = (doc.tags as JsonObject[]).find((t) => t.name === tag);
  return (entry?.['x-svc-resource-type'] as string | undefined) ?? null;
}

/** Decides which validators exist and the route table entry of each operation. */
export function planOperation(
  doc: JsonObject,
  entry: OperationEntry,
  plan: ValidatorPlan,
  v1ShapeNames: Set<string>,
  noPhiRoots: Record<string, string>,
): string {
  const op = entry.operation;
  const validate: string[] = [];
  for (const [slot, location] of Object.entries(LOCATIONS)) {
    const schema = parameterSchema(entry, location);
    if (!schema) continue;
    const name = `${entry.operationId}${slot[0].toUpperCase()}${slot.slice(1)}`;
    plan.parameters[name] = schema;
    validate.push(`${slot}: parameters.${name} as Validator`);
  }
  const requestContent = ((op.requestBody as JsonObject | undefined)?.content ?? {}) as JsonObject;
  const requestTypes = Object.keys(requestContent);
  if (requestTypes.length > 0) {
    plan.bodies[`${entry.operationId}Body`] = (requestContent[requestTypes[0]] as JsonObject).schema as JsonObject;
    validate.push(`body: bodies.${entry.operationId}Body as Validator`);
  }
  const responses: string[] = [];
  for (const [status, response] of Object.entries(op.responses as JsonObject)) {
    const schema = jsonSchemaOf(doc, response);
    if (!schema) continue;
    const name = responseValidatorName(entry, status, response);
    plan.bodies[name] = schema;
    responses.push(`'${status}': bodies.${name} as Validator`);
  }
  const ok = jsonSchemaOf(doc, (op.responses as JsonObject)['200']);
  const v1Root = ok && typeof ok.$ref === 'string' ? ok.$ref.split('/').pop()! : null;
  const requestSchema =
    requestTypes.length > 0
      ? resolve(doc, (requestContent[requestTypes[0]] as JsonObject).schema as JsonObject)
      : undefined;
  const okContent = Object.keys(
    ((resolve(doc, (op.responses as JsonObject)['200']) as JsonObject).content ?? {}) as JsonObject,
  );
  const queryParameters = entry.parameters
    .filter((p) => p.in === 'query')
    .map((p) => ({
      name: p.name,
      in: 'query',
      required: p.required,
      description: p.description ?? '',
      schema: p.schema,
    }));
  const meta = {
    operationId: entry.operationId,
    method: entry.method,
    path: entry.path,
    url: entry.path.replace(/\{([^}]+)\}/g, ':$1'),
    tag: (op.tags as string[])[0],
    resourceType: resourceTypeOf(doc, (op.tags as string[])[0]),
    summary: op.summary,
    scope: op['x-svc-scope'],
    noPhi: op['x-svc-no-phi'],
    capability: op['x-svc-capability'],
    command: op['x-svc-command'],
    costUnits: op['x-svc-cost-units'],
    costBudgeted: op['x-svc-cost-budgeted'] === true,
    v1Schema: v1Root && v1ShapeNames.has(v1Root) ? v1Root : null,
    noPhiSchema: noPhiRoots[entry.operationId] ?? null,
    authenticated: !Array.isArray(op.security) || op.security.length > 0,
    requestContentTypes: requestTypes,
    responseContentType: okContent[0],
    queryParameters,
    // The path takes no other method: a write answers 405 with this reason and next step (x-svc-read-only).
    readOnly: op['x-svc-read-only'] ?? null,
    // Accepts a governed query token (Bearer qt_…) besides access tokens (x-svc-query-token); every other operation refuses one.
    queryTokens: op['x-svc-query-token'] === true,
    // A command whose stored answer holds a secret (a query token's): replays are stored sealed (x-svc-replay-sealed).
    replaySealed: op['x-svc-replay-sealed'] === true,
    // The gateway gives such an operation's handler a cursor sealer bound to the caller and the route.
    pagedByCursor:
      queryParameters.some((p) => p.name === 'cursor') ||
      Object.hasOwn((requestSchema?.properties ?? {}) as JsonObject, 'cursor'),
  };
  const fields = Object.entries(meta).map(([k, v]) => `    ${k}: ${JSON.stringify(v)},`);
  return [
    `  ${entry.operationId}: {`,
    ...fields,
    `    validate: { ${validate.join(', ')} },`,
    `    responses: { ${responses.join(', ')} },`,
    '  },',
  ].join('\n');
}

export function generateRouteTable(
  doc: JsonObject,
  entries: string[],
  shapes: Record<string, V1Shape>,
  noPhiPlans: Record<string, SchemaPlan>,
  requestFields: Record<string, RequestFields>,
  handleParameters: Record<string, HandleParameter[]>,
  webhooks: WebhookEntry[],
): string {
  const x = (key: string) => JSON.stringify(doc[key], null, 2);
  return `${GENERATED_HEADER}
import * as parameters from './validators-parameters.js';
import * as bodies from './validators-bodies.js';
import type { PseudonymKind } from '../shared/ids.js';

export type Validator = ((data: unknown) => boolean) & {
  errors?: Array<{ instancePath: string; keyword: string; message?: string; params: Record<string, unknown> }> | null;
};

export const contractInfo = ${JSON.stringify({ title: (doc.info as JsonObject).title, version: (doc.info as JsonObject).version })} as const;

export const operations = {
${entries.join('\n')}
} as const;

export type OperationId = keyof typeof operations;
export type OperationDefinition = (typeof operations)[OperationId];

export const errorShapes = { ${ERROR_SHAPES.map((n) => `${n}: bodies.schema${n} as Validator`).join(', ')} } as const;

/** How each response schema differs in contract version 1 (derived from x-svc-since and x-svc-v1-name). */
export const v1Shapes: Record<string, { omit: readonly string[]; rename: Readonly<Record<string, string>>; children: Readonly<Record<string, string>> }> = ${JSON.stringify(shapes, null, 2)};

/** A no_phi reduction of one property (x-svc-phi; the vocabulary is the document's x-svc-phi-reductions). */
export type NoPhiReduction =
  | { reduce: 'withheld'; empty: null | '' | readonly never[] | Readonly<Record<string, never>> }
  | { reduce: 'handle'; kind: PseudonymKind; when?: { property: string; values: readonly string[] } }
  | { reduce: 'year'; format: 'date' | 'date-time' }
  | { reduce: 'zip3' | 'birth_date' }
  | { reduce: 'age'; from: string }
  | { reduce: 'category'; values: readonly string[]; otherwise: string }
  | { reduce: 'columns'; from: string };

/** What no_phi sessions see of each response schema that has something to reduce: its reduced fields, and the fields holding such schemas. */
export const noPhiPlans: Record<string, { fields: Readonly<Record<string, NoPhiReduction>>; children: Readonly<Record<string, string>> }> = ${JSON.stringify(noPhiPlans, null, 2)};

/** A request value that a no_phi session sends as a surrogate handle (x-svc-phi handle on a parameter or request property). */
export interface HandleParameter {
  in: 'path' | 'query' | 'body';
  /** The parameter's name, or the body property's dotted path: where the value is, and the field a refusal names. */
  field: string;
  kind: PseudonymKind;
  /** A body property is a handle only when its sibling property has one of these values. */
  when?: { property: string; values: readonly string[] };
}

/** The handles each operation takes, which the gateway resolves before its handler runs (gateway/core/handle-parameters.ts). */
export const handleParameters: Partial<Record<OperationId, readonly HandleParameter[]>> = ${JSON.stringify(handleParameters, null, 2)};

export const errorCodes = ${x('x-svc-error-codes')} as const;

export type ErrorCode = (typeof errorCodes)[number]['code'];

export const contractVersions = ${x('x-svc-contract-versions')} as const;

export const webhookEnvelopeVersion = ${x('x-svc-webhook-envelope-version')} as const;

${generateWebhookTable(webhooks, new Set(Object.keys(noPhiPlans)))}
/** Retries, time-outs and limits of webhook deliveries. */
export const webhookDelivery = ${x('x-svc-webhook-delivery')} as const;

export const requestShapes = ${x('x-svc-request-shapes')} as const;

/** The body fields of each operation with request shapes: x-svc-shape, deprecated and x-svc-successor per field, and the fields of the object a field may hold. */
export const requestFields = ${JSON.stringify(requestFields, null, 2)} as const;

export const paging = ${x('x-svc-paging')} as const;

export const bodyLimits = ${x('x-svc-body-limits')} as const;

export const tokenFailureLimits = ${x('x-svc-token-failure-limits')} as const;

export const quotaLeases = ${x('x-svc-quota-leases')} as const;

export const capabilities = ${x('x-svc-capabilities')} as const;
`;
}
