import { contractVersions } from '../generated/contract.js';

/** Upper bounds (seconds) of the request-duration histogram's buckets: 1 ms to 10 s, then +Inf. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'];
/** The contract's versions, then `none`: a call refused before its version was read (an unknown one, a shed call). */
const VERSIONS: string[] = [...contractVersions.map((v) => v.version), 'none'];
const versionIndex = new Map<unknown, number>(contractVersions.map((v, i) => [v.version, i]));

type IdempotencyOutcome = 'executed' | 'replayed' | 'conflict';
const IDEMPOTENCY_OUTCOMES: IdempotencyOutcome[] = ['executed', 'replayed', 'conflict'];

/**
 * One operation's calls as plain numbers, bumped on every call without allocating: prom-client's labelled children
 * hash their label values into a new string on each observation, about 1.5 µs a call measured here, a few percent of a
 * warm health call. The registry reads these only when /metrics is scraped (metrics.ts).
 */
export class OperationCounts {
  /** Calls by status class and contract version: index class * versions + version. */
  readonly calls = new Float64Array(STATUS_CLASSES.length * VERSIONS.length);
  /** Calls per duration bucket (not cumulative; the last one is +Inf), their sum and count. */
  readonly durations = new Float64Array(DURATION_BUCKETS.length + 1);
  durationSum = 0;
  durationCount = 0;
  /** Refusals by error code: few distinct codes, a map entry made once per code. */
  readonly refusals = new Map<string, number>();
  readonly idempotency = new Float64Array(IDEMPOTENCY_OUTCOMES.length);

  constructor(readonly operationId: string) {}

  /** A call answered with `status` after `seconds`; `version` as negotiated, undefined when refused before. */
  call(status: number, version: unknown, seconds: number): void {
    const statusClass = Math.min(Math.max(Math.floor(status / 100), 1), 5) - 1;
    this.calls[statusClass * VERSIONS.length + (versionIndex.get(version) ?? VERSIONS.length - 1)]++;
    let bucket = 0;
    while (bucket < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[bucket]) bucket++;
    this.durations[bucket]++;
    this.durationSum += seconds;
    this.durationCount++;
  }

  refused(code: string): void {
    this.refusals.set(code, (this.refusals.get(code) ?? 0) + 1);
  }

  command(outcome: IdempotencyOutcome): void {
    this.idempotency[IDEMPOTENCY_OUTCOMES.indexOf(outcome)]++;
  }
}

/** A sample as prom-client's registry formats it. */
export interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

export function callSamples(all: Iterable<OperationCounts>): Sample[] {
  const samples: Sample[] = [];
  for (const counts of all) {
    counts.calls.forEach((value, i) => {
      if (value === 0) return;
      const labels = {
        operation: counts.operationId,
        status_class: STATUS_CLASSES[Math.floor(i / VERSIONS.length)],
        contract_version: VERSIONS[i % VERSIONS.length],
      };
      samples.push({ labels, value });
    });
  }
  return samples;
}

/** The histogram's series in Prometheus' form: cumulative buckets with `le`, then _sum and _count. */
export function durationSamples(name: string, all: Iterable<OperationCounts>): Sample[] {
  const samples: Sample[] = [];
  for (const counts of all) {
    if (counts.durationCount === 0) continue;
    const operation = counts.operationId;
    let cumulative = 0;
    counts.durations.forEach((value, i) => {
      cumulative += value;
      samples.push({
        metricName: `${name}_bucket`,
        labels: { operation, le: i < DURATION_BUCKETS.length ? DURATION_BUCKETS[i] : '+Inf' },
        value: cumulative,
      });
    });
    samples.push({ metricName: `${name}_sum`, labels: { operation }, value: counts.durationSum });
    samples.push({ metricName: `${name}_count`, labels: { operation }, value: counts.durationCount });
  }
  return samples;
}

export function refusalSamples(all: Iterable<OperationCounts>): Sample[] {
  const samples: Sample[] = [];
  for (const counts of all)
    for (const [code, value] of counts.refusals)
      samples.push({ labels: { operation: counts.operationId, code }, value });
  return samples;
}

export function idempotencySamples(all: Iterable<OperationCounts>): Sample[] {
  const samples: Sample[] = [];
  for (const counts of all) {
    counts.idempotency.forEach((value, i) => {
      if (value > 0)
        samples.push({ labels: { operation: counts.operationId, outcome: IDEMPOTENCY_OUTCOMES[i] }, value });
    });
  }
  return samples;
}
