import type { JsonObject } from './contract-document.js';
import { refName } from '../src/shared/contract-v1.js';

/** One event type of the document's top-level `webhooks` (OpenAPI 3.1): what a subscription to it receives. */
export interface WebhookEntry {
  type: string;
  operationId: string;
  /** The envelope schema of its deliveries (the request body the receiver gets). */
  envelopeSchema: string;
  /** The schema of the envelope's `data`: what a no_phi subscription sees reduced. */
  dataSchema: string;
  /** x-svc-event-clinical: held until the subscription's business associate agreement is signed. */
  clinical: boolean;
  /** Not x-svc-event-on-request: subscriptions may name it (an event sent on request goes to one subscription). */
  subscribable: boolean;
}

function dataSchemaOf(schemas: JsonObject, envelope: string): string | undefined {
  const members = ((schemas[envelope] as JsonObject).allOf ?? []) as JsonObject[];
  const data = members
    .map((member) => (member.properties as JsonObject | undefined)?.data as JsonObject | undefined)
    .find(Boolean);
  return data && refName(data);
}

/** Every event type in document order; throws when one lacks what deliveries need. */
export function listWebhooks(doc: JsonObject): WebhookEntry[] {
  const schemas = (doc.components as JsonObject).schemas as JsonObject;
  return Object.entries((doc.webhooks ?? {}) as JsonObject).map(([type, item]) => {
    const operation = (item as JsonObject).post as JsonObject | undefined;
    const body = (
      ((operation?.requestBody as JsonObject | undefined)?.content as JsonObject | undefined)?.['application/json'] as
        | JsonObject
        | undefined
    )?.schema as JsonObject | undefined;
    const envelopeSchema = body && refName(body);
    const dataSchema = envelopeSchema && dataSchemaOf(schemas, envelopeSchema);
    if (!operation || !envelopeSchema || !dataSchema || typeof operation['x-svc-event-clinical'] !== 'boolean') {
      throw new Error(
        `openapi.json: webhooks["${type}"] needs a post with x-svc-event-clinical and a JSON body referring to an envelope schema whose allOf names its data schema`,
      );
    }
    return {
      type,
      operationId: operation.operationId as string,
      envelopeSchema,
      dataSchema,
      clinical: operation['x-svc-event-clinical'] as boolean,
      subscribable: operation['x-svc-event-on-request'] !== true,
    };
  });
}

/** The generated table of event types, with the validator of each one's envelope. */
export function generateWebhookTable(entries: WebhookEntry[], noPhiSchemas: Set<string>): string {
  const rows = entries.map((entry) =>
    [
      `  ${JSON.stringify(entry.type)}: {`,
      `    operationId: ${JSON.stringify(entry.operationId)},`,
      `    clinical: ${entry.clinical},`,
      `    subscribable: ${entry.subscribable},`,
      `    dataSchema: ${JSON.stringify(entry.dataSchema)},`,
      `    noPhiSchema: ${JSON.stringify(noPhiSchemas.has(entry.dataSchema) ? entry.dataSchema : null)},`,
      `    validate: bodies.${entry.operationId}Body as Validator,`,
      '  },',
    ].join('\n'),
  );
  return `/** The event types of the document's \`webhooks\`: the schema of each one's data, its no_phi plan, and its envelope's validator. */
export const webhookEvents = {
${rows.join('\n')}
} as const;

export type WebhookEventType = keyof typeof webhookEvents;
`;
}
