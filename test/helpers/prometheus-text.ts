/** One sample of the Prometheus text exposition format (version 0.0.4). */
export interface PrometheusSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/y;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function labelsOf(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const match = LABEL.exec(text);
    if (!match) throw new Error(`malformed labels in "${line}"`);
    labels[match[1]] = match[2].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
  }
  return labels;
}

/** Values as Prometheus reads them (Go's ParseFloat): NaN and Inf in any letter case, as prom-client writes "Nan". */
function numberOf(text: string): number | undefined {
  const special: Record<string, number> = { nan: NaN, '+inf': Infinity, inf: Infinity, '-inf': -Infinity };
  const lower = text.toLowerCase();
  if (lower in special) return special[lower];
  const value = Number(text);
  return Number.isNaN(value) || text.trim() === '' ? undefined : value;
}

/** The family a sample belongs to: histograms' _bucket, _sum and _count are declared under the base name. */
function familyOf(name: string, types: Map<string, string>): string | undefined {
  if (types.has(name)) return name;
  const base = name.replace(/_(bucket|sum|count)$/, '');
  return types.get(base) === 'histogram' || types.get(base) === 'summary' ? base : undefined;
}

/**
 * Parses the exposition text strictly: every sample's family has a HELP and a TYPE line before it, each line is a
 * comment or a well-formed sample with a numeric value. Throws, naming the line, on anything else.
 */
export function parsePrometheusText(text: string): PrometheusSample[] {
  const types = new Map<string, string>();
  const helps = new Set<string>();
  const samples: PrometheusSample[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('# HELP ')) {
      helps.add(line.split(' ')[2]);
      continue;
    }
    if (line.startsWith('# TYPE ')) {
      const [, , name, type] = line.split(' ');
      if (!TYPES.has(type)) throw new Error(`unknown type in "${line}"`);
      types.set(name, type);
      continue;
    }
    if (line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`malformed sample "${line}"`);
    const [, name, labelText, valueText] = match;
    const family = familyOf(name, types);
    if (!family || !helps.has(family)) throw new Error(`sample "${line}" has no HELP and TYPE before it`);
    const value = numberOf(valueText);
    if (value === undefined) throw new Error(`value of "${line}" is not a number`);
    samples.push({ name, labels: labelText ? labelsOf(labelText, line) : {}, value });
  }
  return samples;
}

/** The value of the one sample named `name` whose labels include `labels`; 0 when there is none. */
export function sampleValue(samples: PrometheusSample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value ?? 0;
}
