type Env = Record<string, string | undefined>;

/** Where spans go: OTLP over HTTP (JSON bodies), or the process's standard output. */
export type TracingExporter = 'otlp' | 'console';

const PROTOCOLS = new Set(['http/json']);

/**
 * Tracing is off unless the standard OpenTelemetry variables ask for it: an OTLP endpoint
 * (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) or OTEL_TRACES_EXPORTER (otlp, console, none).
 * OTEL_SDK_DISABLED=true turns it off whatever else is set. Off, nothing of OpenTelemetry is even loaded.
 */
export function tracingExporter(env: Env): TracingExporter | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const named = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  let exporter: TracingExporter | undefined;
  if (named.length > 0) {
    if (named.length > 1 || !['otlp', 'console', 'none'].includes(named[0])) {
      throw new Error(`OTEL_TRACES_EXPORTER must be one of otlp, console or none, got "${env.OTEL_TRACES_EXPORTER}"`);
    }
    exporter = named[0] === 'none' ? undefined : (named[0] as TracingExporter);
  } else if (endpoint) {
    exporter = 'otlp';
  }
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL;
  if (exporter === 'otlp' && protocol && !PROTOCOLS.has(protocol)) {
    throw new Error(
      `the service exports OTLP over HTTP with JSON bodies: set OTEL_EXPORTER_OTLP_PROTOCOL to http/json or leave it unset, got "${protocol}"`,
    );
  }
  return exporter;
}
