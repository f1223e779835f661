import type { SpanExporter } from '@opentelemetry/sdk-trace-node';
import type { ObservedDatabase } from './metrics.js';
import type { TracingExporter } from './tracing-settings.js';

/** The pipeline's steps that get a span of their own (database statements get theirs from the database's reports). */
export type PipelineStep = 'authenticate' | 'authorize' | 'limits' | 'handler' | 'audit';

/** A step's span; ended once, with the failure when it failed. */
export interface StepSpan {
  end(failure?: unknown): void;
}

/**
 * A span's place in its trace as W3C Trace Context headers carry it (`traceparent`, and `tracestate` when the trace has
 * vendor state): what an event keeps of the call that emitted it, so that its deliveries continue that trace.
 */
export interface TraceContext {
  traceparent: string;
  tracestate?: string;
}

/** What the trace of one call records: never a parameter, body or header value, only ids, codes and names. */
export interface CallTrace {
  /** The call's own span (not a step's) as W3C Trace Context. */
  traceContext(): TraceContext;
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
  start(
    operation: TracedOperation,
    headers: Record<string, string | string[] | undefined>,
    requestId: string,
  ): CallTrace;
}

/** One delivery attempt of a webhook, as its span names it: never the receiver's URL or the payload. */
export interface TracedAttempt {
  deliveryId: string;
  eventType: string;
  /** 1 for the first attempt. */
  attempt: number;
}

/** An attempt's span: the headers that carry it to the receiver, and its end with the receiver's answer. */
export interface AttemptSpan {
  /** `traceparent` naming this attempt's span (and `tracestate`, when the trace has one). */
  readonly headers: Record<string, string>;
  /** `status` is the receiver's, when it answered; `failure` a low-cardinality reason when the attempt failed. */
  end(status: number | undefined, failure: string | undefined): void;
}

/** Starts each delivery attempt's span, a CLIENT child of the span of the call that emitted the event. */
export interface DeliveryTracer {
  attempt(emittedBy: TraceContext, attempt: TracedAttempt): AttemptSpan;
}

/** The process's tracing, once started: the pipeline's tracer, statements as spans, and the exporter's flush at shutdown. */
export interface Tracing {
  tracer: CallTracer;
  deliveries: DeliveryTracer;
  /** Statements of `database` become spans of the call that ran them; the function returned stops that. */
  watch(database: ObservedDatabase): () => void;
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  exporter: TracingExporter | SpanExporter;
  /** Batches spans (the default for a real exporter); tests export each span as it ends. */
  batch?: boolean;
}
