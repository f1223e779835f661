import type { Migration } from 'kysely';
import * as m0001 from './0001_agencies.js';
import * as m0002 from './0002_identity.js';
import * as m0003 from './0003_command_ledger.js';
import * as m0004 from './0004_usage.js';
import * as m0005 from './0005_clinical.js';
import * as m0006 from './0006_pseudonyms.js';
import * as m0007 from './0007_service_secrets.js';
import * as m0008 from './0008_metering_segments.js';
import * as m0009 from './0009_idempotency_key_hold.js';
import * as m0010 from './0010_idempotency_response_required.js';
import * as m0011 from './0011_patient_chart_copies.js';
import * as m0012 from './0012_patient_chart_changed_at.js';
import * as m0013 from './0013_token_failures_window_index.js';
import * as m0014 from './0014_sealed_secrets.js';
import * as m0015 from './0015_physician_orders.js';
import * as m0016 from './0016_working_collections.js';
import * as m0017 from './0017_hhvbp.js';
import * as m0018 from './0018_remittances.js';
import * as m0019 from './0019_webhooks.js';
import * as m0020 from './0020_query_tokens.js';
import * as m0021 from './0021_mcp.js';
import * as m0022 from './0022_webhook_trace_context.js';
import * as m0023 from './0023_webhook_retention.js';
import * as m0024 from './0024_webhook_held_index.js';
import * as m0025 from './0025_webhook_pending_by_subscription.js';
import * as m0026 from './0026_user_password_change.js';
import * as m0027 from './0027_write_positions.js';
import * as m0028 from './0028_client_keys.js';
import * as m0029 from './0029_physician_order_revisions.js';
import * as m0030 from './0030_console_sessions.js';
import * as m0031 from './0031_request_log.js';
import * as m0032 from './0032_webhook_delivery_attempts.js';
import * as m0033 from './0033_request_log_segment_bounds.js';

/**
 * Every migration, in order. Listed by hand rather than read from the filesystem so the same list
 * works under tsx and from the compiled output. Forward-only: migrations have no `down`.
 */
export const migrations: Record<string, Migration> = {
  '0001_agencies': m0001,
  '0002_identity': m0002,
  '0003_command_ledger': m0003,
  '0004_usage': m0004,
  '0005_clinical': m0005,
  '0006_pseudonyms': m0006,
  '0007_service_secrets': m0007,
  '0008_metering_segments': m0008,
  '0009_idempotency_key_hold': m0009,
  '0010_idempotency_response_required': m0010,
  '0011_patient_chart_copies': m0011,
  '0012_patient_chart_changed_at': m0012,
  '0013_token_failures_window_index': m0013,
  '0014_sealed_secrets': m0014,
  '0015_physician_orders': m0015,
  '0016_working_collections': m0016,
  '0017_hhvbp': m0017,
  '0018_remittances': m0018,
  '0019_webhooks': m0019,
  '0020_query_tokens': m0020,
  '0021_mcp': m0021,
  '0022_webhook_trace_context': m0022,
  '0023_webhook_retention': m0023,
  '0024_webhook_held_index': m0024,
  '0025_webhook_pending_by_subscription': m0025,
  '0026_user_password_change': m0026,
  '0027_write_positions': m0027,
  '0028_client_keys': m0028,
  '0029_physician_order_revisions': m0029,
  '0030_console_sessions': m0030,
  '0031_request_log': m0031,
  '0032_webhook_delivery_attempts': m0032,
  '0033_request_log_segment_bounds': m0033,
};
