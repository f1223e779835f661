import type { TenantRow, Timestamp } from '../../db/tables/tenant-row.js';

export type OrderType = 'plan_of_care' | 'recertification' | 'verbal' | 'supplemental' | 'face_to_face' | 'discharge';
export type SignatureStatus =
  | 'signed'
  | 'awaiting_signature'
  | 'signature_not_required'
  | 'rejected'
  | 'superseded'
  | 'cancelled';
export type DeliveryMethod = 'fax' | 'portal' | 'e_signature';

/** db/migrations/0015_physician_orders.ts. No order content: the partition never serves it. */
interface PhysicianOrdersTable extends TenantRow {
  patient_id: string;
  physician_id: string;
  /** Aging days are counted in its time zone. */
  office_id: string;
  order_type: OrderType;
  signature_status: SignatureStatus;
  /** Set exactly when sent_at is. */
  delivery_method: DeliveryMethod | null;
  sent_at: Timestamp | null;
  /** Set exactly when signed. */
  signed_at: Timestamp | null;
  /** The signed order back at the agency. */
  received_at: Timestamp | null;
}

/** db/migrations/0029_physician_order_revisions.ts: rewritten with every write that changes an agency's aging summary. */
interface PhysicianOrderRevisionsTable {
  agency_id: string;
  revision: string;
}

export interface PhysicianOrderTables {
  physician_orders: PhysicianOrdersTable;
  physician_order_revisions: PhysicianOrderRevisionsTable;
}
