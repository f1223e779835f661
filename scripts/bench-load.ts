/** Drives autocannon against the service and the baseline in alternating slices and summarizes both. */
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { headersOf, sides, type Scenario, type Server, type Side, type Target } from './bench-scenarios.js';

interface Tally {
  requests: number;
  seconds: number;
  latencies: number[];
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** Non-2xx responses by status and the error code of their body ("401 PLATFORM_TOKEN_EXPIRED"). */
  refusals: Record<string, number>;
}

type Summary = ReturnType<typeof summarize>;

export interface Timing {
  /** Seconds per target, split into SLICES_PER_TARGET slices (longer for slow responses). */
  duration: number;
  /** Seconds per target before measuring. */
  warmup: number;
}

// autocannon stops only at a sample tick: a short interval lets fractional durations (slices of --quick) end on time.
const SAMPLE_MS = 100;

/** The error code of an error body, in either of the contract's two shapes, or of the baselines' `{ error }`. */
export function errorCodeOf(body: string): string {
  try {
    const parsed = JSON.parse(body) as { code?: unknown; error?: unknown };
    const code =
      typeof parsed.error === 'object' && parsed.error !== null
        ? (parsed.error as { code?: unknown }).code
        : (parsed.code ?? parsed.error);
    return typeof code === 'string' ? code : 'no error code';
  } catch {
    return 'not JSON';
  }
}

function countRefusal(tally: Tally, status: number, body: string): void {
  if (status >= 200 && status < 300) return;
  const refusal = `${status} ${errorCodeOf(body)}`;
  tally.refusals[refusal] = (tally.refusals[refusal] ?? 0) + 1;
}

async function load(url: string, side: Side, connections: number, seconds: number, tally?: Tally): Promise<void> {
  const { request, setupRequest } = side;
  await request.tokens?.freshFor(seconds);
  return new Promise((resolve, reject) => {
    const { method, path, body } = request;
    // onResponse sees each body: a refusal is counted by its error code, so a failed run names its cause.
    const onResponse = tally && ((status: number, responseBody: string) => countRefusal(tally, status, responseBody));
    const options = {
      url: url + path,
      method,
      headers: headersOf(request),
      body,
      connections,
      duration: seconds,
      sampleInt: SAMPLE_MS,
      // autocannon's defaults hold for what an entry leaves out, not for what it sets to undefined.
      ...(setupRequest || onResponse
        ? { requests: [{ method, path, ...(setupRequest && { setupRequest }), ...(onResponse && { onResponse }) }] }
        : {}),
    };
    const instance = autocannon(options, (err, result) => {
      if (err) return reject(err);
      if (tally) add(tally, result);
      resolve();
    });
    // Latencies are kept per response so percentiles stay exact across the alternating slices.
    if (tally) instance.on('response', (_client, _status, _bytes, ms) => tally.latencies.push(ms));
  });
}

function add(tally: Tally, result: autocannon.Result): void {
  tally.requests += result.requests.total;
  tally.seconds += result.duration;
  tally.non2xx += result.non2xx;
  tally.errors += result.errors;
  tally.timeouts += result.timeouts;
  for (const [code, { count = 0 }] of Object.entries(result.statusCodeStats ?? {})) {
    tally.statusCodes[code] = (tally.statusCodes[code] ?? 0) + count;
  }
}

const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;

function summarize(t: Tally) {
  const sorted = Float64Array.from(t.latencies).sort();
  const pct = (q: number) => (sorted.length ? sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] : NaN);
  return {
    requestsPerSecond: round(t.requests / t.seconds, 1),
    p50Ms: round(pct(0.5), 3),
    p99Ms: round(pct(0.99), 3),
    requests: t.requests,
    seconds: round(t.seconds, 2),
    non2xx: t.non2xx,
    errors: t.errors,
    timeouts: t.timeouts,
    statusCodes: t.statusCodes,
    refusals: t.refusals,
  };
}

export interface Measurement {
  service: Summary;
  baseline: Summary;
  /** service / baseline requests per second. */
  ratio: number;
  /**
   * Share of the machine's CPU time the hypervisor gave to other guests while both were measured (Linux's steal
   * time), in percent; null where /proc/stat is not there. Above a few percent, ratios of runs vary widely.
   */
  stealPercent: number | null;
}

/** Ticks of all CPUs: total and stolen (the 8th value of /proc/stat's "cpu" line). */
function cpuTicks(): { total: number; steal: number } | null {
  try {
    const values = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1).map(Number);
    return { total: values.reduce((a, b) => a + b, 0), steal: values[7] ?? 0 };
  } catch {
    return null;
  }
}

/** A slice ends with its in-flight requests uncounted, about half a round per connection: slices hold at least this many rounds. */
const MIN_ROUNDS_PER_SLICE = 10;
/**
 * The warm-up lasts until each connection has had WARMUP_ROUNDS responses (the slice growing fourfold, at most
 * three times, for slow responses) and the target WARMUP_RESPONSES in all, or WARMUP_MAX_SECONDS have passed:
 * V8 optimizes a function only after many calls, and a route serving a few hundred requests per second is still
 * being compiled after two seconds (referral create used a third less server CPU per request after 5,000 requests).
 */
const WARMUP_ROUNDS = 2;
const WARMUP_TRIES = 3;
export const WARMUP_RESPONSES = 5_000;
const WARMUP_MAX_SECONDS = 20;

const emptyTally = (): Tally => ({
  requests: 0,
  seconds: 0,
  latencies: [],
  non2xx: 0,
  errors: 0,
  timeouts: 0,
  statusCodes: {},
  refusals: {},
});

const meanSeconds = (tally: Tally) => tally.latencies.reduce((a, b) => a + b, 0) / tally.latencies.length / 1000;

/** Warms the target up and returns the mean latency of its last slice, in seconds. */
async function warmUp(url: string, side: Side, connections: number, seconds: number): Promise<number> {
  for (let tries = 1, elapsed = 0, responses = 0; ; ) {
    const tally = emptyTally();
    await load(url, side, connections, seconds, tally);
    elapsed += seconds;
    responses += tally.latencies.length;
    if (tally.latencies.length < WARMUP_ROUNDS * connections) {
      if (tries++ === WARMUP_TRIES) return tally.latencies.length > 0 ? meanSeconds(tally) : seconds;
      seconds *= 4;
    } else if (responses >= WARMUP_RESPONSES || elapsed >= WARMUP_MAX_SECONDS) {
      return meanSeconds(tally);
    }
  }
}

/**
 * Slices per target. On a shared machine the CPU left to this guest changes within seconds: short slices in
 * alternation (ABBA, repeated) spread those changes over both targets instead of over one.
 */
const SLICES_PER_TARGET = 4;
const ORDER: Target[] = ['service', 'baseline', 'baseline', 'service'];

/** Warms both targets up, then measures them in alternating slices, so drift (thermal, other load) weighs equally on both. */
export async function measure(
  urls: Partial<Record<Server, string>>,
  scenario: Scenario,
  connections: number,
  timing: Timing,
): Promise<Measurement> {
  const plan = sides(scenario);
  const at = (target: Target) => [urls[plan[target].server]!, plan[target]] as const;
  const slices = {} as Record<Target, number>;
  const tallies = { service: emptyTally(), baseline: emptyTally() };
  for (const target of ['service', 'baseline'] as const) {
    const latency = await warmUp(...at(target), connections, timing.warmup);
    slices[target] = Math.max(timing.duration / SLICES_PER_TARGET, Math.ceil(MIN_ROUNDS_PER_SLICE * latency * 10) / 10);
    if (slices[target] > timing.duration / SLICES_PER_TARGET)
      console.error(`  ${target}: responses take ${latency.toFixed(2)} s, so slices of ${slices[target]} s`);
  }
  const before = cpuTicks();
  for (let slice = 0; slice < 2 * SLICES_PER_TARGET; slice++) {
    const target = ORDER[slice % ORDER.length];
    await load(...at(target), connections, slices[target], tallies[target]);
  }
  const after = cpuTicks();
  const stealPercent =
    before && after && after.total > before.total
      ? round((100 * (after.steal - before.steal)) / (after.total - before.total), 1)
      : null;
  const service = summarize(tallies.service);
  const baseline = summarize(tallies.baseline);
  return { service, baseline, ratio: round(service.requestsPerSecond / baseline.requestsPerSecond, 3), stealPercent };
}
