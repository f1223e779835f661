import type { EventOutbox } from '../db/tenant-store.js';
import { webhookEvents } from '../generated/contract.js';
import { randomId } from '../shared/ids.js';

/**
 * The outbox behind CommandStore.emit: a row of webhook_events in the command's own transaction, so the event exists
 * exactly when the change does. Workers make its deliveries later (delivery-queue.ts); a command pays one insert for all its events.
 * The emitting call's trace context is kept with it: each delivery attempt is a span of that trace.
 */
export const webhookOutbox: EventOutbox = async (trx, agencyId, events, emittedBy) => {
  const unknown = events.find((event) => !Object.hasOwn(webhookEvents, event.type));
  if (unknown) throw new Error(`${unknown.type} is not an event type of the contract's webhooks`);
  if (events.length === 0) return;
  await trx
    .insertInto('webhook_events')
    .values(
      events.map((event) => ({
        agency_id: agencyId,
        id: randomId('evt_', 12),
        type: event.type,
        data: JSON.stringify(event.data),
        traceparent: emittedBy?.traceparent ?? null,
        tracestate: emittedBy?.tracestate ?? null,
      })),
    )
    .execute();
};
