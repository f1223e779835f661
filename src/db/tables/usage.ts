import type { Generated } from 'kysely';

/** Requests per minute, requests per UTC day, and cost units per UTC day. */
export type UsageKind = 'minute' | 'day' | 'cost';

/** One shared counter per integration, kind and window; instances lease units from it. */
export interface UsageWindowsTable {
  agency_id: string;
  extension_id: string;
  kind: UsageKind;
  window_start: Date;
  /** Units granted to instances so far and not handed back at their shutdown (granted, not necessarily spent). */
  used: number;
  /** Units granted by the latest reservation, so the reserving instance learns its share in one statement. */
  last_grant: number;
}

/** The calls of one integration written by one flush (or one command), one array element per call. */
interface MeteringSegmentsTable {
  id: Generated<number>;
  agency_id: string;
  extension_id: string;
  /** Offsets count from it; no call of the segment precedes it. */
  base_at: Date;
  last_at: Date;
  operation_ids: string[];
  statuses: number[];
  cost_units: number[];
  durations_ms: number[];
  request_ids: string[];
  offsets_ms: number[];
  /** Null in segments written before the request log (migration 0031); within an array, null is "answered". */
  error_codes: (string | null)[] | null;
  contract_versions: (string | null)[] | null;
  replayed: boolean[] | null;
}

/** View: one row per metered call. */
interface MeteringEventsView {
  segment_id: number;
  position: number;
  agency_id: string;
  extension_id: string;
  operation_id: string;
  status: number;
  cost_units: number;
  duration_ms: number;
  request_id: string;
  occurred_at: Date;
  /** The refusal's code; null for a call that was answered (and for every call metered before the request log). */
  error_code: string | null;
  /** The contract version the call was served in; null before the request log. */
  contract_version: string | null;
  /** An idempotent replay of a command's stored answer; null before the request log. */
  replayed: boolean | null;
  /** The bounds of the call's segment (no call of it is before the first or after the last): what finds a period's segments. */
  segment_base_at: Date;
  segment_last_at: Date;
}

export interface UsageTables {
  usage_windows: UsageWindowsTable;
  metering_segments: MeteringSegmentsTable;
  metering_events: MeteringEventsView;
}
