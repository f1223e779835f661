import { sql } from 'kysely';
import type { TenantStore } from '../../db/tenant-store.js';
import type { UsageKind } from '../../db/tables/usage.js';

/** How far back the console looks into an integration's calls. */
export const LOG_DAYS = 30;
/** The days the charts draw, today included. */
export const CHART_DAYS = 14;
export const LOG_PAGE_SIZE = 50;

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

/** One metered call as the log shows it: what metering keeps, never a body (metering holds none, hence no PHI). */
export interface LoggedCall {
  occurredAt: Date;
  operationId: string;
  status: number;
  errorCode: string | null;
  requestId: string;
  durationMs: number;
  contractVersion: string | null;
  replayed: boolean | null;
  /** Where the next (older) page starts, when this call is the last of its page. */
  position: LogPosition;
}

/** A call's place in the log, newest first: its time, then its segment and place in it (calls of one millisecond). */
export interface LogPosition {
  atMs: number;
  segmentId: number;
  index: number;
}

export const logCursor = (p: LogPosition) => `${p.atMs}-${p.segmentId}-${p.index}`;

/** The position a `before` parameter names; undefined for anything that is not one (the caller refuses it). */
export function parseLogCursor(text: string): LogPosition | undefined {
  const match = /^(\d{1,15})-(\d{1,15})-(\d{1,9})$/.exec(text);
  if (!match) return undefined;
  return { atMs: Number(match[1]), segmentId: Number(match[2]), index: Number(match[3]) };
}

/** The integration's calls since a time, unnested from the segments whose last call is since then (found by index). */
const calls = (store: TenantStore, extensionId: string, sinceMs: number) =>
  store
    .selectFrom('metering_events')
    .where('extension_id', '=', extensionId)
    .where('segment_last_at', '>=', new Date(sinceMs))
    .where('occurred_at', '>=', new Date(sinceMs));

/** A page is first looked for among this last stretch of calls before it: a busy integration's page is found there. */
const FIRST_LOOK_MS = 3_600_000;

/** Up to a page and one of the integration's calls since `sinceMs`, older than `before` when given, newest first. */
function logRows(store: TenantStore, extensionId: string, before: LogPosition | undefined, sinceMs: number) {
  let query = calls(store, extensionId, sinceMs);
  if (before)
    query = query
      .where('segment_base_at', '<=', new Date(before.atMs))
      .where(
        sql<boolean>`(occurred_at, segment_id, position) < (${new Date(before.atMs)}, ${before.segmentId}, ${before.index})`,
      );
  return query
    .select([
      'occurred_at',
      'operation_id',
      'status',
      'error_code',
      'request_id',
      'duration_ms',
      'contract_version',
      'replayed',
      'segment_id',
      'position',
    ])
    .orderBy('occurred_at', 'desc')
    .orderBy('segment_id', 'desc')
    .orderBy('position', 'desc')
    .limit(LOG_PAGE_SIZE + 1)
    .execute();
}

/**
 * A page of the integration's calls of the last LOG_DAYS days, newest first, older than `before` when given. Looked
 * for first in the hour before it: a full page found there is the page (every call outside is older than all in it).
 */
export async function requestLogPage(
  store: TenantStore,
  extensionId: string,
  before: LogPosition | undefined,
): Promise<{ calls: LoggedCall[]; older: LogPosition | undefined }> {
  const sinceMs = Date.now() - LOG_DAYS * DAY_MS;
  const firstLookMs = (before?.atMs ?? Date.now()) - FIRST_LOOK_MS;
  let rows = await logRows(store, extensionId, before, Math.max(sinceMs, firstLookMs));
  if (rows.length <= LOG_PAGE_SIZE && firstLookMs > sinceMs) rows = await logRows(store, extensionId, before, sinceMs);
  const page = rows.slice(0, LOG_PAGE_SIZE).map(
    (row): LoggedCall => ({
      occurredAt: row.occurred_at,
      operationId: row.operation_id,
      status: row.status,
      errorCode: row.error_code,
      requestId: row.request_id,
      durationMs: row.duration_ms,
      contractVersion: row.contract_version,
      replayed: row.replayed,
      position: { atMs: row.occurred_at.getTime(), segmentId: Number(row.segment_id), index: Number(row.position) },
    }),
  );
  return { calls: page, older: rows.length > LOG_PAGE_SIZE ? page.at(-1)!.position : undefined };
}

export interface DayCount {
  /** YYYY-MM-DD, UTC. */
  day: string;
  requests: number;
  errors: number;
}

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Requests and refusals (status 400 and up) per UTC day over the last CHART_DAYS days, oldest first, quiet days as 0. */
export async function callsPerDay(store: TenantStore, extensionId: string): Promise<DayCount[]> {
  const todayMs = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const firstMs = todayMs - (CHART_DAYS - 1) * DAY_MS;
  const rows = await calls(store, extensionId, firstMs)
    .select([
      sql<string>`to_char(occurred_at at time zone 'UTC', 'YYYY-MM-DD')`.as('day'),
      sql<number>`count(*)::int`.as('requests'),
      sql<number>`(count(*) filter (where status >= 400))::int`.as('errors'),
    ])
    .groupBy('day')
    .execute();
  const byDay = new Map(rows.map((row) => [row.day, row]));
  return Array.from({ length: CHART_DAYS }, (_, i) => {
    const day = utcDay(firstMs + i * DAY_MS);
    return { day, requests: byDay.get(day)?.requests ?? 0, errors: byDay.get(day)?.errors ?? 0 };
  });
}

export interface ErrorCount {
  code: string;
  count: number;
  lastAt: Date;
}

/** The integration's refusals of the last LOG_DAYS days by error code, the most frequent first. */
export function errorsByCode(store: TenantStore, extensionId: string): Promise<ErrorCount[]> {
  return calls(store, extensionId, Date.now() - LOG_DAYS * DAY_MS)
    .where('error_code', 'is not', null)
    .select([
      sql<string>`error_code`.as('code'),
      sql<number>`count(*)::int`.as('count'),
      sql<Date>`max(occurred_at)`.as('lastAt'),
    ])
    .groupBy('error_code')
    .orderBy('count', 'desc')
    .orderBy('code')
    .execute();
}

export interface UsageToday {
  /** Calls metered since 00:00 UTC, and the cost units they were charged. */
  requests: number;
  costUnits: number;
  /** What the limiter's shared counters hold for the current windows: units its instances reserved (see usage-limits.ts). */
  reserved: Record<UsageKind, number>;
}

/** Today's use (UTC), from metering, beside the limiter's counters for the current minute and day. */
export async function usageToday(store: TenantStore, extensionId: string): Promise<UsageToday> {
  const nowMs = Date.now();
  const dayStart = Math.floor(nowMs / DAY_MS) * DAY_MS;
  const minuteStart = Math.floor(nowMs / MINUTE_MS) * MINUTE_MS;
  const metered = await calls(store, extensionId, dayStart)
    .select([sql<number>`count(*)::int`.as('requests'), sql<number>`coalesce(sum(cost_units), 0)::int`.as('cost')])
    .executeTakeFirstOrThrow();
  const windows = await store
    .selectFrom('usage_windows')
    .select(['kind', 'window_start', 'used'])
    .where('extension_id', '=', extensionId)
    .where('window_start', '>=', new Date(dayStart))
    .execute();
  const current = (kind: UsageKind, start: number) =>
    windows.find((w) => w.kind === kind && w.window_start.getTime() === start)?.used ?? 0;
  return {
    requests: metered.requests,
    costUnits: metered.cost,
    reserved: {
      minute: current('minute', minuteStart),
      day: current('day', dayStart),
      cost: current('cost', dayStart),
    },
  };
}
