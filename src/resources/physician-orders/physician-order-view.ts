import type { components } from '../../generated/openapi.js';
import { orderAging } from '../../domain/physician-orders/aging.js';
import type { OrderRow } from './physician-order-repository.js';

type PhysicianOrder = components['schemas']['PhysicianOrder'];

/** The order as the contract shows it, aged at `asOf` in its office's calendar against its agency's SLA. */
export function physicianOrder(row: OrderRow, asOf: Date): PhysicianOrder {
  const slaDays = row.order_sla_days!;
  return {
    id: row.id,
    order_type: row.order_type,
    patient_id: row.patient_id,
    physician_id: row.physician_id,
    physician_name: row.physician_name,
    physician_npi: row.physician_npi,
    office_id: row.office_id,
    signature_status: row.signature_status,
    delivery_method: row.delivery_method,
    sent_at: row.sent_at?.toISOString() ?? null,
    signed_at: row.signed_at?.toISOString() ?? null,
    received_at: row.received_at?.toISOString() ?? null,
    ...orderAging(row, { asOf, timeZone: row.timezone!, slaDays }),
    sla_days: slaDays,
    created_at: row.created_at.toISOString(),
  };
}
