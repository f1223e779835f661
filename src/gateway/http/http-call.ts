import type { FastifyRequest } from 'fastify';
import type { AuditTrail } from '../../shared/audit-trail.js';
import type { ExtensionPolicy, Principal } from '../../shared/principal.js';
import type { ContractVersion, Deprecation } from '../../shared/versioning.js';
import type { CallTrace } from '../../observability/call-trace.js';
import type { HeaderValues, OperationCall } from '../core/operation-call.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Made by an operation's route, or by the error handler for a refusal that came before it. */
    call: HttpCall | undefined;
  }
}

/**
 * An HTTP request as the gateway's call: the request's own parts are read through (Fastify fills the body after
 * admission), and the gateway's state lives here, not on the FastifyRequest. The pipeline's begin() sets every field.
 */
export class HttpCall implements OperationCall {
  deprecations!: Deprecation[];
  contractVersion!: ContractVersion;
  admittedAtMs!: number;
  principal: Principal | undefined;
  policy: ExtensionPolicy | undefined;
  auditTrail!: AuditTrail;
  recordedInTransaction!: boolean;
  audited!: boolean;
  replayed!: boolean;
  refusal: string | undefined;
  trace: CallTrace | undefined;
  costUnits!: number;

  constructor(private readonly request: FastifyRequest) {}

  get id() {
    return this.request.id;
  }

  get method() {
    return this.request.method;
  }

  get url() {
    return this.request.url;
  }

  /** Read only when asked: behind a proxy, request.ip parses X-Forwarded-For, a cost only the token endpoint pays. */
  get ip() {
    return this.request.ip;
  }

  get log() {
    return this.request.log;
  }

  get receivedAt() {
    return this.request.receivedAt;
  }

  get params(): unknown {
    return this.request.params;
  }

  set params(value: unknown) {
    this.request.params = value;
  }

  get query(): unknown {
    return this.request.query;
  }

  set query(value: unknown) {
    this.request.query = value;
  }

  get headers(): HeaderValues {
    return this.request.headers;
  }

  get body(): unknown {
    return this.request.body;
  }

  set body(value: unknown) {
    this.request.body = value;
  }
}

/** The request's call, made on first use: the route's first hook, or the error handler when a refusal came before it. */
export function callOf(request: FastifyRequest): HttpCall {
  return (request.call ??= new HttpCall(request));
}
