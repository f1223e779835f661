import type { BaseLogger } from 'pino';
import type { ExtensionPolicy, Principal } from '../../shared/principal.js';
import type { AuditTrail } from '../../shared/audit-trail.js';
import type { ContractVersion, Deprecation } from '../../shared/versioning.js';
import type { CallTrace } from '../../observability/call-trace.js';

/** What the gateway and handlers log with: pino's methods, which a Fastify request's logger has too. */
export type CallLogger = Pick<BaseLogger, 'level' | 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'>;

/** A request's headers as Node hands them over: lower-case names. */
export type HeaderValues = Record<string, string | string[] | undefined>;

/** The parts of a call that the contract validates (in place: parameters are coerced, defaults filled) and a handler reads. */
export interface CallInput {
  params: unknown;
  query: unknown;
  headers: HeaderValues;
  body: unknown;
}

/** What the gateway learns about a call on its way through the pipeline (pipeline.ts sets each of these first). */
export interface CallState {
  deprecations: Deprecation[];
  contractVersion: ContractVersion;
  /** When the gateway took the call, before any I/O: the call is metered at this instant. */
  admittedAtMs: number;
  principal: Principal | undefined;
  /** The caller's integration's policy, as admission read it. */
  policy: ExtensionPolicy | undefined;
  auditTrail: AuditTrail;
  /** A command that ran wrote its audit and metering rows in its own transaction. */
  recordedInTransaction: boolean;
  audited: boolean;
  replayed: boolean;
  /** The error code the call was answered with; set by the transport's error mapping, for the metrics. */
  refusal: string | undefined;
  /** The call's trace; undefined with tracing off. */
  trace: CallTrace | undefined;
  /** Cost units metered and charged for the call: the operation's, or what its family's admission decided (a query's). */
  costUnits: number;
}

/**
 * One call of an operation, whatever carried it. A FastifyRequest (decorated by operation-routes.ts) is one as it
 * stands, so an HTTP call wraps nothing; another transport builds one (direct-call.ts).
 */
export interface OperationCall extends CallInput, CallState {
  /** The request id: the correlationId of errors and the request_id of audit and metering rows. */
  readonly id: string;
  /** Method and path (url up to any "?") are what an idempotency key's fingerprint covers, with the body and PHI mode. */
  readonly method: string;
  readonly url: string;
  /** The caller's network address; the token endpoint counts failed attempts by it. */
  readonly ip: string;
  readonly log: CallLogger;
  /** performance.now() as the call arrived: metering's duration counts from here. */
  receivedAt: number | undefined;
}

/** The status and headers of the answer being built, for the gateway's steps and the handlers. A FastifyReply is one. */
export interface ResponseHead {
  readonly statusCode: number;
  code(status: number): ResponseHead;
  header(name: string, value: string): ResponseHead;
  headers(values: Record<string, string>): ResponseHead;
  hasHeader(name: string): boolean;
  getHeader(name: string): string | number | string[] | undefined;
  type(contentType: string): ResponseHead;
}
