import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';

/** Past which the partition sheds load; 0 turns a signal off. docs/operations.md documents the defaults. */
export interface PressureThresholds {
  /** Mean event-loop delay over a sample window, in milliseconds. */
  eventLoopDelayMs: number;
  /** V8 heap in use, in percent of its limit. */
  heapUsedPercent: number;
  /** Mean wait for a PostgreSQL connection over a sample window, in milliseconds. */
  poolWaitMs: number;
  /** How often the signals are read. */
  sampleIntervalMs: number;
  /** What a shed call's Retry-After says, in seconds. */
  retryAfterSeconds: number;
}

/** The signals of the last window. */
interface PressureReadings {
  eventLoopDelayMs: number;
  heapUsedPercent: number;
  poolWaitMs: number;
}

type PressureSignal = keyof PressureReadings;

interface PressureReport {
  shedding: boolean;
  /** The signals past their threshold. */
  over: PressureSignal[];
  readings: PressureReadings;
  thresholds: PressureReadings;
}

// The delay histogram's resolution: its samples are late by at least this much on an idle loop.
const RESOLUTION_MS = 10;

const round = (n: number) => Math.round(n * 10) / 10;

/**
 * Decides, once per sample window and off the request path, whether the partition sheds load: a call then costs the
 * pipeline one boolean read (pipeline.ts begin). Signals: event-loop delay (perf_hooks), heap in use (v8), and the
 * waits for a database connection that the database reports (src/db/postgres.ts).
 */
export class PressureMonitor {
  /** Read by the pipeline on every call. */
  shedding = false;
  private readings: PressureReadings = { eventLoopDelayMs: 0, heapUsedPercent: 0, poolWaitMs: 0 };
  private over: PressureSignal[] = [];
  private waitSum = 0;
  private waits = 0;
  private delays: IntervalHistogram | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(readonly thresholds: PressureThresholds) {}

  start(): void {
    if (this.timer) return;
    this.delays = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    this.delays.enable();
    this.timer = setInterval(() => this.sample(), this.thresholds.sampleIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.delays?.disable();
  }

  /** A wait for a database connection (the database's observer). */
  connectionWait(waitMs: number): void {
    this.waitSum += waitMs;
    this.waits++;
  }

  /** Reads the signals of the window that ends now and decides. */
  sample(): void {
    const heap = getHeapStatistics();
    const delays = this.delays;
    this.decide({
      eventLoopDelayMs: delays && delays.count > 0 ? Math.max(0, delays.mean / 1e6 - RESOLUTION_MS) : 0,
      heapUsedPercent: (100 * heap.used_heap_size) / heap.heap_size_limit,
      poolWaitMs: this.waits > 0 ? this.waitSum / this.waits : 0,
    });
    delays?.reset();
    this.waitSum = 0;
    this.waits = 0;
  }

  decide(readings: PressureReadings): void {
    const limits = this.thresholds;
    this.readings = readings;
    this.over = (Object.keys(readings) as PressureSignal[]).filter(
      (signal) => limits[signal] > 0 && readings[signal] > limits[signal],
    );
    this.shedding = this.over.length > 0;
  }

  report(): PressureReport {
    const { eventLoopDelayMs, heapUsedPercent, poolWaitMs } = this.thresholds;
    const r = this.readings;
    return {
      shedding: this.shedding,
      over: this.over,
      readings: {
        eventLoopDelayMs: round(r.eventLoopDelayMs),
        heapUsedPercent: round(r.heapUsedPercent),
        poolWaitMs: round(r.poolWaitMs),
      },
      thresholds: { eventLoopDelayMs, heapUsedPercent, poolWaitMs },
    };
  }
}
