import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  propagation,
  trace,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ConsoleSpanExporter,
  NodeTracerProvider,
  SimpleSpanProcessor,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-node';
import { statementLabel, type ObservedDatabase } from './metrics.js';
import type {
  AttemptSpan,
  CallTrace,
  CallTracer,
  DeliveryTracer,
  PipelineStep,
  StepSpan,
  TraceContext,
  TracedAttempt,
  TracedOperation,
  Tracing,
  TracingOptions,
} from './call-trace.js';

/** A refusal's code (PlatformError, RequestError), else the error's class name: never its message, which may quote input. */
function errorType(failure: unknown): string {
  if (failure && typeof failure === 'object') {
    const { code, name } = failure as { code?: unknown; name?: unknown };
    if (typeof code === 'string') return code;
    if (typeof name === 'string') return name;
  }
  return 'Error';
}

function endSpan(span: Span, failure?: unknown): void {
  if (failure !== undefined) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.setAttribute('error.type', errorType(failure));
  }
  span.end();
}

/** `span` as W3C Trace Context headers (the registered propagator's): its traceparent, and its trace's tracestate if any. */
function w3cHeaders(span: Span): Record<string, string> {
  const headers: Record<string, string> = {};
  propagation.inject(trace.setSpan(ROOT_CONTEXT, span), headers);
  return headers;
}

function traceContextOf(span: Span): TraceContext {
  const { traceparent, tracestate } = w3cHeaders(span);
  return tracestate ? { traceparent, tracestate } : { traceparent };
}

class SdkCallTrace implements CallTrace {
  private readonly context: Context;

  constructor(
    private readonly tracer: Tracer,
    private readonly span: Span,
    parent: Context,
  ) {
    this.context = trace.setSpan(parent, span);
  }

  step(name: PipelineStep): StepSpan {
    const span = this.tracer.startSpan(`gateway.${name}`, undefined, this.context);
    return { end: (failure) => endSpan(span, failure) };
  }

  within<T>(name: PipelineStep, work: () => T): T {
    const span = this.tracer.startSpan(`gateway.${name}`, undefined, this.context);
    let result: T;
    try {
      result = context.with(trace.setSpan(this.context, span), work);
    } catch (err) {
      endSpan(span, err);
      throw err;
    }
    if (result instanceof Promise)
      result.then(
        () => span.end(),
        (err: unknown) => endSpan(span, err),
      );
    else span.end();
    return result;
  }

  traceContext(): TraceContext {
    return traceContextOf(this.span);
  }

  identify({ agencyId, extensionId, phiMode }: { agencyId: string; extensionId: string; phiMode: string }): void {
    this.span.setAttributes({ 'svc.agency_id': agencyId, 'svc.extension_id': extensionId, 'svc.phi_mode': phiMode });
  }

  end(status: number, code: string | undefined, contractVersion: string | undefined): void {
    this.span.setAttribute('http.response.status_code', status);
    if (contractVersion) this.span.setAttribute('svc.contract_version', contractVersion);
    if (code) this.span.setAttribute('error.type', code);
    if (status >= 500) this.span.setStatus({ code: SpanStatusCode.ERROR });
    this.span.end();
  }
}

const UNRECORDED_STEP: StepSpan = { end: () => undefined };

/**
 * A call its sampler left out: no step spans, no context switch around the handler, no attributes; only its place in
 * the trace travels on (its events' deliveries continue it, unsampled too). What a ratio sampler saves is all of this.
 */
class UnsampledCallTrace implements CallTrace {
  constructor(private readonly span: Span) {}

  step(): StepSpan {
    return UNRECORDED_STEP;
  }

  within<T>(_name: PipelineStep, work: () => T): T {
    return work();
  }

  traceContext(): TraceContext {
    return traceContextOf(this.span);
  }

  identify(): void {}

  end(): void {}
}

class SdkCallTracer implements CallTracer {
  constructor(private readonly tracer: Tracer) {}

  start(
    operation: TracedOperation,
    headers: Record<string, string | string[] | undefined>,
    requestId: string,
  ): CallTrace {
    // The caller's traceparent (and tracestate), W3C Trace Context: this call continues its trace.
    const parent = propagation.extract(ROOT_CONTEXT, headers);
    const span = this.tracer.startSpan(
      `${operation.method} ${operation.path}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': operation.method,
          'http.route': operation.path,
          'svc.operation_id': operation.operationId,
          'svc.request_id': requestId,
        },
      },
      parent,
    );
    return span.isRecording() ? new SdkCallTrace(this.tracer, span, parent) : new UnsampledCallTrace(span);
  }
}

class SdkDeliveryTracer implements DeliveryTracer {
  constructor(private readonly tracer: Tracer) {}

  attempt(emittedBy: TraceContext, { deliveryId, eventType, attempt }: TracedAttempt): AttemptSpan {
    const parent = propagation.extract(ROOT_CONTEXT, emittedBy);
    const span = this.tracer.startSpan(
      'webhook.delivery',
      {
        kind: SpanKind.CLIENT,
        // The receiver's URL is the subscriber's, and its query may carry anything: it is left out, as is the payload.
        attributes: {
          'http.request.method': 'POST',
          'svc.event_type': eventType,
          'svc.delivery_id': deliveryId,
          'svc.delivery_attempt': attempt,
        },
      },
      parent,
    );
    return {
      headers: w3cHeaders(span),
      end(status, failure) {
        if (status !== undefined) span.setAttribute('http.response.status_code', status);
        if (failure !== undefined) {
          span.setAttribute('error.type', failure);
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        span.end();
      },
    };
  }
}

function exporterOf(option: TracingOptions['exporter']): SpanExporter {
  if (option === 'otlp') return new OTLPTraceExporter();
  if (option === 'console') return new ConsoleSpanExporter();
  return option;
}

/**
 * OpenTelemetry's Node SDK for traces only: W3C Trace Context propagation, AsyncLocalStorage context (so a
 * statement finds the handler that ran it), the resource from OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, the
 * sampler from OTEL_TRACES_SAMPLER, batching from OTEL_BSP_*, the OTLP endpoint and headers from OTEL_EXPORTER_OTLP_*.
 */
export function startSdkTracing(options: TracingOptions): Tracing {
  const exporter = exporterOf(options.exporter);
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': 'extension-api' }))
    .merge(detectResources({ detectors: [envDetector] }));
  const processor = options.batch === false ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(exporter);
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  provider.register();
  const tracer = provider.getTracer('extension-api');
  return {
    tracer: new SdkCallTracer(tracer),
    deliveries: new SdkDeliveryTracer(tracer),
    watch(database: ObservedDatabase) {
      return database.observe({
        query(sql, durationMs, failed) {
          const active = context.active();
          if (!trace.getSpan(active)?.isRecording()) return;
          // Reported once finished: the span starts when the statement did.
          const now = Date.now();
          const span = tracer.startSpan(
            'db.query',
            {
              kind: SpanKind.CLIENT,
              startTime: now - durationMs,
              attributes: { 'db.system.name': 'postgresql', 'db.query.summary': statementLabel(sql) },
            },
            active,
          );
          if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
          span.end(now);
        },
      });
    },
    shutdown: () => provider.shutdown(),
  };
}
