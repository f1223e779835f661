import type { SpanExporter } from '@opentelemetry/sdk-trace-node';
import type { ObservedDatabase } from './metrics.js';
import type { TracingExporter } from './tracing-settings.js';

/** The pipeline's steps that get a span of their own (database statements get theirs from the database's reports). */
export type PipelineStep = 'authenticate' | 'authorize' | 'limits' | 'handler' | 'audit';

/** A step's span; ended once, with the failure when it failed. */
export interface StepSpan {
  end(failure?: unknown): void;
}

/** What the trace of one call records: never a parameter, body or header value, only ids, codes and names. */
export interface CallTrace {
  step(name: PipelineStep): StepSpan;
  /** Runs `work` with the step's span as the active one (statements under it become its children); ends when it settles. */
  within<T>(name: PipelineStep, work: () => T): T;
  /** The caller, once authenticated: agency and extension ids and the PHI mode. */
  identify(principal: { agencyId: string; extensionId: string; phiMode: string }): void;
  /** Ends the call's span with its status, and the error code when refused. */
  end(status: number, code: string | undefined, contractVersion: string | undefined): void;
}

/** The operation a call runs, as its span names it. */
export interface TracedOperation {
  operationId: string;
  method: string;
  /** The route's template (`/api/v1/ext/patients/{id}`), never the path a caller sent. */
  path: string;
}

/** Starts a call's trace, a child of the caller's W3C `traceparent` when it sent one. */
export interface CallTracer {
  start(operation: TracedOperation, headers: Record<string, string | string[] | undefined>, requestId: string): CallTrace;
}

/** The process's tracing, once started: the pipeline's tracer, statements as spans, and the exporter's flush at shutdown. */
export interface Tracing {
  tracer: CallTracer;
  /** Statements of `database` become spans of the call that ran them; the function returned stops that. */
  watch(database: ObservedDatabase): () => void;
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  exporter: TracingExporter | SpanExporter;
  /** Batches spans (the default for a real exporter); tests export each span as it ends. */
  batch?: boolean;
}
