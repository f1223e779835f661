import { webhookEnvelopeVersion, webhookEvents, type WebhookEventType } from '../generated/contract.js';
import { CURRENT_CONTRACT_VERSION } from '../identity/grants.js';
import { reduceForNoPhi, type HandleLookup } from '../domain/no-phi-reduction.js';
import type { PhiMode } from '../shared/principal.js';
import type { WebhookEnvelope } from './verify-delivery.js';

interface StoredEvent {
  id: string;
  agency_id: string;
  type: string;
  data: Record<string, unknown>;
  created_at: Date;
}

/**
 * The body of a delivery: the envelope, and the event's data in the subscription's PHI mode. A no_phi
 * subscription's data is reduced by the routes' own reducer, from the x-svc-phi marks of the event's data schema,
 * with the agency's surrogate handles.
 */
export async function deliveryBody(event: StoredEvent, phiMode: PhiMode, handles: HandleLookup): Promise<string> {
  const { noPhiSchema } = webhookEvents[event.type as WebhookEventType];
  const data =
    phiMode === 'no_phi' && noPhiSchema ? await reduceForNoPhi(event.data, noPhiSchema, handles) : event.data;
  const envelope: WebhookEnvelope = {
    id: event.id,
    type: event.type,
    envelope_version: webhookEnvelopeVersion,
    contract_version: CURRENT_CONTRACT_VERSION,
    agency_id: event.agency_id,
    created_at: event.created_at.toISOString(),
    data: data as Record<string, unknown>,
  };
  return JSON.stringify(envelope);
}
