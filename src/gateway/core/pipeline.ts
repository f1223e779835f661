import type { Kysely, Transaction } from 'kysely';
import {
  handleParameters,
  type HandleParameter,
  type OperationDefinition,
  type OperationId,
} from '../../generated/contract.js';
import type { ReadReplicas } from '../../db/read-replicas.js';
import type { DB } from '../../db/schema.js';
import type { Principal } from '../../shared/principal.js';
import type { CursorSeal } from '../../identity/cursor-seal.js';
import { CursorSealer } from '../../db/cursor-sealer.js';
import type { Handler, RequestContext } from './handler.js';
import type { OperationCall, ResponseHead } from './operation-call.js';
import { negotiateVersion, deprecationHeader } from './contract-version.js';
import { validateRequest } from './request-validation.js';
import { resolveHandles, runResolved } from './handle-parameters.js';
import { serializeFor } from './contract-serializers.js';
import { ConstantAnswer, plainBody } from './constant-answer.js';
import { admissionSteps, runAdmission, type AdmissionStep, type Admitters, type CallAdmission } from './admission.js';
import { requestFingerprint, runRemembered } from './idempotency.js';
import type { CompletedKeys } from './completed-keys.js';
import type { CommandLedger } from './command-ledger.js';
import type { AuditBuffer } from '../audit.js';
import type { MeteringBuffer } from './metering.js';
import { CommandStore, TenantStore, type EventOutbox } from '../../db/tenant-store.js';
import { reduceForNoPhi } from '../../domain/no-phi-reduction.js';
import type { RunningHandlers } from './running-handlers.js';
import { elapsedMs } from './response-time.js';
import { NEVER_ABORTED, withAbortableTimeout, withTimeout } from './handler-timeout.js';
import { auditEvent, meteringEvent } from './call-records.js';
import type { OperationCounts } from '../../observability/operation-counts.js';
import type { ServiceMetrics } from '../../observability/metrics.js';
import type { PressureMonitor } from '../../observability/pressure.js';
import type { CallTracer, TracedOperation } from '../../observability/call-trace.js';
import { PlatformError } from '../../shared/platform-error.js';
import { canonicalJson } from '../../shared/canonical-json.js';

export interface GatewayServices extends Admitters {
  db: Kysely<DB>;
  /** Streaming replicas that take reads (DATABASE_READ_URL); without them every read runs on `db`. */
  replicas?: ReadReplicas;
  handlerTimeoutMs: number;
  metering: MeteringBuffer;
  audit: AuditBuffer;
  cursorSeal: CursorSeal;
  /** Where commands' events are written (the webhooks outbox); without one, emitting refuses. */
  outbox?: EventOutbox;
  /** Each operation's counters; none with metrics off. */
  metrics?: ServiceMetrics;
  /** Past its thresholds every call is refused first, with 503 and Retry-After (load shedding). */
  pressure?: PressureMonitor;
  /** Spans of each call's steps; none with tracing off. */
  tracer?: CallTracer;
}

/** The refusal of a call while the service sheds load; one instance serves every shed call, so refusing costs little. */
function overloaded(retryAfterSeconds: number): PlatformError {
  return new PlatformError(
    'PLATFORM_SERVICE_UNAVAILABLE',
    'The service is overloaded; retry after the Retry-After delay.',
    undefined,
    { 'retry-after': String(retryAfterSeconds) },
  );
}

/** Headers of a command's response that are stored with it and replayed. */
const REPLAYED_HEADERS = ['svc-extension-contract-version', 'deprecation', 'link', 'cache-control', 'location', 'etag'];

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** Adds deprecations that the call collected (contract version, request shape, fields) to the envelope. */
function withDeprecations(body: unknown, call: OperationCall, response: ResponseHead): unknown {
  const deprecations = call.deprecations;
  if (deprecations.length === 0 || typeof body !== 'object' || body === null) return body;
  if (!response.hasHeader('deprecation') && deprecations[0].since)
    response.header('deprecation', deprecationHeader(deprecations[0].since));
  const envelope = body as { meta?: Record<string, unknown> };
  return { ...envelope, meta: { ...envelope.meta, deprecations } };
}

/**
 * The gateway's steps for one operation, over a call and the head of its answer, whatever the transport:
 * begin, admit (the admission steps of admission.ts), run (validation, the handler under its timeout, idempotency
 * for a command, no_phi reduction, version serialization, PHI-read audit), record (metering, audit of the rest).
 * A transport runs handle() and then record() (direct-call.ts); HTTP splits handle() around the body's reading
 * (http/operation-routes.ts).
 */
export class OperationPipeline {
  private readonly containsPhi: boolean;
  private readonly counts: OperationCounts | undefined;
  private readonly pressure: PressureMonitor | undefined;
  private readonly shed: PlatformError | undefined;
  private readonly tracer: CallTracer | undefined;
  private readonly traced: TracedOperation;
  private readonly steps: readonly AdmissionStep[];
  private readonly handles: readonly HandleParameter[];

  constructor(
    readonly operation: OperationDefinition,
    private readonly handler: Handler<OperationId>,
    private readonly services: GatewayServices,
    private readonly running: RunningHandlers,
    /** The gateway's completed idempotency keys, shared by its commands. */
    private readonly completedKeys: CompletedKeys,
    admission?: CallAdmission,
  ) {
    this.steps = admissionSteps(operation, services, admission);
    this.containsPhi = operation.noPhi !== 'allowed';
    this.handles = handleParameters[operation.operationId] ?? [];
    this.counts = services.metrics?.operation(operation.operationId);
    this.pressure = services.pressure;
    this.shed = services.pressure && overloaded(services.pressure.thresholds.retryAfterSeconds);
    this.tracer = services.tracer;
    this.traced = { operationId: operation.operationId, method: operation.method, path: operation.path };
  }

  /** Sets every field of the call's state, then negotiates the contract version (which may refuse). */
  begin(call: OperationCall, response: ResponseHead, nowMs: number) {
    call.admittedAtMs = nowMs;
    call.deprecations = [];
    call.auditTrail = { resourceType: this.operation.resourceType, resourceIds: [] };
    call.principal = undefined;
    call.policy = undefined;
    call.recordedInTransaction = false;
    call.audited = false;
    call.replayed = false;
    call.refusal = undefined;
    call.trace = this.tracer ? this.tracer.start(this.traced, call.headers, call.id) : undefined;
    call.costUnits = this.operation.costUnits;
    if (this.containsPhi) response.header('cache-control', 'no-store');
    if (this.pressure?.shedding) throw this.shed;
    call.contractVersion = negotiateVersion(call, response);
  }

  /**
   * Identity (the Authorization header, or a principal another transport established), access and limits: the
   * operation's admission steps. A warm call is admitted in the same tick and answers nothing; otherwise a promise.
   */
  admit(
    call: OperationCall,
    response: ResponseHead,
    nowMs: number,
    authorization: string | undefined,
    principal?: Principal,
  ): void | Promise<void> {
    if (this.steps.length === 0) return;
    return runAdmission(this.steps, { call, response, nowMs, authorization, principal, policy: undefined });
  }

  /**
   * Runs an admitted call. A read answers its (serialized) body, or a promise of it; a command a promise of the JSON
   * text it stored for replays, with the status and content type set on `response`. Refusals throw or reject.
   */
  run(call: OperationCall, response: ResponseHead): unknown {
    const work = () =>
      this.operation.command ? this.running.track(this.runCommand(call, response)) : this.runRead(call, response);
    return call.trace ? call.trace.within('handler', work) : work();
  }

  /**
   * The whole call for a transport that has all of it at once (direct-call.ts): begin, admission, run. Over HTTP the
   * body is read between admission and run, so http/operation-routes.ts calls those steps from Fastify's hooks.
   * Either way, the transport records the call once its answer, or refusal, is final.
   */
  async handle(
    call: OperationCall,
    response: ResponseHead,
    authorization: string | undefined,
    principal?: Principal,
  ): Promise<unknown> {
    const nowMs = Date.now();
    this.begin(call, response, nowMs);
    await this.admit(call, response, nowMs, authorization, principal);
    return this.run(call, response);
  }

  /** Every call is counted; every call of a known principal is metered; refused and failed commands and PHI reads are audited too. */
  record(call: OperationCall, response: ResponseHead) {
    const durationMs = elapsedMs(call);
    const status = response.statusCode;
    if (this.counts) this.count(this.counts, call, status, durationMs);
    call.trace?.end(status, call.refusal, call.contractVersion);
    if (!call.principal || call.recordedInTransaction) return;
    this.services.metering.push(meteringEvent(this.operation, call, status, durationMs));
    if (call.audited || !(this.operation.command || this.containsPhi)) return;
    try {
      this.services.audit.push(auditEvent(this.operation, call, status));
    } catch (err) {
      call.log.error({ err }, 'audit of a refused call was not recorded');
    }
  }

  private count(counts: OperationCounts, call: OperationCall, status: number, durationMs: number) {
    counts.call(status, call.contractVersion, durationMs / 1000);
    const refusal = call.refusal;
    if (refusal !== undefined) counts.refused(refusal);
    if (!this.operation.command) return;
    if (call.replayed) counts.command('replayed');
    else if (call.recordedInTransaction) counts.command('executed');
    else if (refusal === 'PLATFORM_IDEMPOTENCY_CONFLICT') counts.command('conflict');
  }

  /** The handler's context; the only place one is made. */
  private context(call: OperationCall, response: ResponseHead, db: Kysely<DB>, signal: AbortSignal) {
    return {
      operation: this.operation,
      principal: call.principal,
      policy: call.policy,
      params: call.params,
      query: call.query,
      headers: call.headers,
      body: call.body,
      contractVersion: call.contractVersion,
      deprecations: call.deprecations,
      requestId: call.id,
      store: this.storeOf(call, db),
      cursors: this.operation.pagedByCursor ? this.cursorsOf(call) : undefined,
      log: call.log,
      response,
      // The call itself, typed down to its address: over HTTP, reading request.ip has a cost only the token endpoint pays.
      source: call,
      signal,
    } as RequestContext<OperationId>;
  }

  /** A command's store holds its transaction; the token endpoint, which has no caller, gets none. */
  private storeOf(call: OperationCall, db: Kysely<DB>): TenantStore | undefined {
    const principal = call.principal;
    if (!principal) return undefined;
    if (this.operation.command)
      return new CommandStore(db as Transaction<DB>, principal, call.auditTrail, this.services.outbox, call.trace);
    return new TenantStore(db, principal, call.auditTrail);
  }

  /** The handler, on the call's input with the handles a no_phi session sent resolved first (handle-parameters.ts). */
  private invoke(context: RequestContext<OperationId>): unknown {
    const resolving = context.store && resolveHandles(this.handles, context, context.store);
    return resolving ? runResolved(resolving, context, () => this.handler(context)) : this.handler(context);
  }

  /** Bound here, so that no handler can seal or open a cursor for another caller or route. */
  private cursorsOf(call: OperationCall): CursorSealer {
    return new CursorSealer(
      this.services.cursorSeal,
      call.principal!,
      this.operation.operationId,
      call.params as Record<string, string>,
    );
  }

  private serialize(body: unknown, call: OperationCall, response: ResponseHead): unknown {
    return withDeprecations(serializeFor(call.contractVersion, this.operation, plainBody(body)), call, response);
  }

  /** Whether the session sees this operation's results reduced (openapi.json x-svc-phi); phi sessions never do. */
  private reducesFor(call: OperationCall): boolean {
    return this.operation.noPhiSchema !== null && call.principal?.phiMode === 'no_phi';
  }

  /** The one place where a no_phi session's answer is reduced: after the handler, before the version serializer. */
  private async reduced(result: unknown, store: TenantStore): Promise<unknown> {
    return reduceForNoPhi(plainBody(await result), this.operation.noPhiSchema!, (kind, ids) =>
      store.pseudonyms.handlesFor(kind, ids),
    );
  }

  /** A handler that answers without I/O is answered in the same tick: no promise, no timer. */
  private runRead(call: OperationCall, response: ResponseHead): unknown {
    validateRequest(this.operation, call);
    const replicas = this.services.replicas;
    const principal = call.principal;
    if (replicas && principal)
      return this.running.track(
        replicas.readerFor(principal.agencyId, principal.extensionId).then((db) => this.readOn(db, call, response)),
      );
    return this.readOn(this.services.db, call, response);
  }

  private readOn(db: Kysely<DB>, call: OperationCall, response: ResponseHead): unknown {
    const context = this.context(call, response, db, NEVER_ABORTED);
    const result = this.invoke(context);
    const reducing = this.reducesFor(call);
    if (!reducing && !(result instanceof Promise)) return this.answer(result, call, response);
    const work = reducing ? this.reduced(result, context.store!) : (result as Promise<unknown>);
    const answered = withTimeout(work, this.services.handlerTimeoutMs).then((body) =>
      this.answer(body, call, response),
    );
    return this.running.track(answered);
  }

  private answer(body: unknown, call: OperationCall, response: ResponseHead): unknown {
    // PHI leaves only once its read is on the audit trail (the buffer refuses when it cannot keep up).
    if (this.containsPhi) this.auditNow(call, 200);
    // A call with deprecations gets them in its body and headers: only the others share the encoded bytes.
    if (body instanceof ConstantAnswer && call.deprecations.length === 0) {
      response.type(JSON_CONTENT_TYPE);
      const version = call.contractVersion;
      return body.encodedFor(version, (plain) => serializeFor(version, this.operation, plain));
    }
    if (this.operation.responseContentType !== 'text/plain') return this.serialize(body, call, response);
    response.type('text/plain; charset=utf-8');
    return body;
  }

  /**
   * A command runs once per idempotency key: its rows, audit record, metering row and stored
   * response commit in one transaction, or nothing does.
   */
  private async runCommand(call: OperationCall, response: ResponseHead): Promise<string> {
    validateRequest(this.operation, call);
    const principal = call.principal!;
    const identity = {
      agencyId: principal.agencyId,
      extensionId: principal.extensionId,
      key: String(call.headers['idempotency-key']),
      operationId: this.operation.operationId,
      // The PHI mode too: a key's stored answer is for one mode, never replayed to the other.
      fingerprint: requestFingerprint(call.method, call.url.split('?')[0], call.body, principal.phiMode),
    };
    const replayBinding = this.operation.replaySealed
      ? Buffer.from(canonicalJson(['replay', identity.agencyId, identity.extensionId, identity.key]), 'utf8')
      : undefined;
    if (replayBinding) await this.services.cursorSeal.ready();
    const { response: stored, replayed } = await withAbortableTimeout(
      (signal) =>
        runRemembered(
          this.completedKeys,
          this.services.db,
          identity,
          (trx) => this.execute(call, response, trx, signal, replayBinding),
          signal,
        ),
      this.services.handlerTimeoutMs,
    );
    call.replayed = replayed;
    call.recordedInTransaction = !replayed;
    // Before the answer: the integration's next read, on any process, must not go to a replica without this command.
    if (!replayed && this.services.replicas)
      await this.services.replicas.recordWrite(principal.agencyId, principal.extensionId);
    if (replayed) this.auditNow(call, stored.status);
    if (replayed) response.headers({ ...stored.headers, 'idempotent-replayed': 'true' });
    response.code(stored.status).type(JSON_CONTENT_TYPE);
    return replayBinding ? ((await this.services.cursorSeal.open(stored.body, replayBinding)) as string) : stored.body;
  }

  private async execute(
    call: OperationCall,
    response: ResponseHead,
    trx: Transaction<DB>,
    signal: AbortSignal,
    replayBinding?: Uint8Array,
  ): Promise<CommandLedger> {
    const context = this.context(call, response, trx, signal);
    const result = await this.invoke(context);
    const answer = this.reducesFor(call) ? await this.reduced(result, context.store!) : result;
    const text = JSON.stringify(this.serialize(answer, call, response));
    // An answer that holds a secret is stored sealed, bound to its key: the database alone never holds the secret.
    const body = replayBinding ? await this.services.cursorSeal.seal(text, replayBinding) : text;
    const headers: Record<string, string> = {};
    for (const name of REPLAYED_HEADERS) if (response.hasHeader(name)) headers[name] = String(response.getHeader(name));
    return {
      audit: auditEvent(this.operation, call, 200),
      metering: meteringEvent(this.operation, call, 200, elapsedMs(call)),
      response: { status: 200, headers, body },
    };
  }

  private auditNow(call: OperationCall, status: number) {
    const span = call.trace?.step('audit');
    try {
      this.services.audit.push(auditEvent(this.operation, call, status));
    } catch (err) {
      span?.end(err);
      throw err;
    }
    span?.end();
    call.audited = true;
  }
}
