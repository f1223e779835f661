import type { Tracing, TracingOptions } from './call-trace.js';

/** Loads OpenTelemetry only now: with tracing off, the process never loads it. */
export async function startTracing(options: TracingOptions): Promise<Tracing> {
  const { startSdkTracing } = await import('./tracing-sdk.js');
  return startSdkTracing(options);
}
