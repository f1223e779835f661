import type { ColumnType, Generated, JSONColumnType } from 'kysely';
import type { PhiMode } from '../../shared/principal.js';
import type { DefaultedTimestamp as Timestamp } from './tenant-row.js';

type SubscriptionStatus = 'enabled' | 'disabled';
export type DeliveryStatus = 'held' | 'pending' | 'delivered' | 'failed';

interface WebhookSubscriptionsTable {
  agency_id: string;
  id: string;
  url: string;
  event_types: string[];
  phi_mode: PhiMode;
  baa_signed_at: Date | null;
  allow_http_loopback: ColumnType<boolean, boolean | undefined, boolean>;
  status: ColumnType<SubscriptionStatus, SubscriptionStatus | undefined, SubscriptionStatus>;
  disabled_reason: string | null;
  failing_since: Date | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

interface WebhookSecretsTable {
  agency_id: string;
  subscription_id: string;
  id: string;
  /** Sealed under the key-encryption key, bound to webhookSecretRow(id). */
  secret_sealed: string;
  created_at: Timestamp;
  retires_at: Date | null;
}

interface WebhookEventsTable {
  agency_id: string;
  id: string;
  seq: ColumnType<number, never, never>;
  type: string;
  data: JSONColumnType<Record<string, unknown>, string, string>;
  created_at: Timestamp;
  fanned_out_at: Date | null;
  traceparent: string | null;
  tracestate: string | null;
}

interface WebhookDeliveriesTable {
  agency_id: string;
  id: string;
  subscription_id: string;
  event_id: string;
  event_seq: ColumnType<number, number, never>;
  status: DeliveryStatus;
  attempts: Generated<number>;
  next_attempt_at: Timestamp;
  last_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: Date | null;
  created_at: Timestamp;
}

interface WebhookDeliveryAttemptsTable {
  agency_id: string;
  delivery_id: string;
  /** The delivery's attempt count when it was made: 1 for the first, on through retries and replays. */
  attempt: number;
  attempted_at: Timestamp;
  /** The receiver's answer; null when none came (refused address, time-out, connection error). */
  status_code: number | null;
  latency_ms: number;
  error: string | null;
}

export interface WebhookTables {
  webhook_subscriptions: WebhookSubscriptionsTable;
  webhook_secrets: WebhookSecretsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_delivery_attempts: WebhookDeliveryAttemptsTable;
}
