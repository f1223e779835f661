import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { Kysely, Transaction } from 'kysely';
import { operations, type OperationDefinition, type OperationId } from '../generated/contract.js';
import type { DB } from '../db/schema.js';
import type { Handler, Handlers, RequestContext } from './handler.js';
import type { AuditTrail } from '../shared/audit-trail.js';
import { CommandStore, TenantStore, type EventOutbox } from '../db/tenant-store.js';
import { PlatformError } from '../shared/platform-error.js';
import { negotiateVersion, deprecationHeader } from './contract-version.js';
import type { ContractVersion, Deprecation } from '../shared/versioning.js';
import { checkContentType, refuseRepeatedAuthorization, validateRequest } from './request-validation.js';
import { serializeFor } from './contract-serializers.js';
import { authorize } from './access.js';
import { requestFingerprint, runIdempotent } from './idempotency.js';
import type { CommandLedger } from './command-ledger.js';
import type { AuditBuffer, AuditEvent } from './audit.js';
import type { MeteringBuffer, MeteringEvent } from './metering.js';
import type { UsageLimiter } from './usage-limits.js';
import { CursorSealer } from '../db/cursor-sealer.js';
import { reduceForNoPhi } from './no-phi-reduction.js';
import type { CursorSeal } from '../identity/cursor-seal.js';
import type { Principal } from '../shared/principal.js';
import type { Authentication } from '../identity/authenticator.js';
import { RunningHandlers } from './running-handlers.js';
import { elapsedMs } from './response-time.js';

declare module 'fastify' {
  interface FastifyRequest {
    deprecations: Deprecation[];
    contractVersion: ContractVersion;
    /** When the gateway took the call, before any I/O: the call is metered at this instant. */
    admittedAtMs: number;
    principal: Principal | undefined;
    auditTrail: AuditTrail;
    /** A command that ran wrote its audit and metering rows in its own transaction. */
    recordedInTransaction: boolean;
    audited: boolean;
    replayed: boolean;
  }
  interface FastifyContextConfig {
    /** Set on the contract's operations; other routes (probes, documents) have none. */
    operationId?: OperationId;
  }
}

export interface GatewayServices {
  db: Kysely<DB>;
  handlerTimeoutMs: number;
  authenticator: {
    authenticate(authorization: string | undefined): Promise<Authentication>;
    authenticateNow(authorization: string | undefined, nowMs: number): Authentication | undefined;
  };
  usageLimiter: UsageLimiter;
  metering: MeteringBuffer;
  audit: AuditBuffer;
  cursorSeal: CursorSeal;
  /** Where commands' events are written; none until events are delivered (webhooks). */
  outbox?: EventOutbox;
}

/** Headers of a command's response that are stored with it and replayed. */
const REPLAYED_HEADERS = ['svc-extension-contract-version', 'deprecation', 'link', 'cache-control', 'location', 'etag'];

function timeoutError(ms: number) {
  return new PlatformError('PLATFORM_TIMEOUT', `The operation did not finish within ${ms} ms; nothing of a command was committed.`);
}

/** Reads are only raced against the clock; nothing they started needs cancelling. */
function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(timeoutError(ms)), ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

/** A command also gets a signal, so that its transaction refuses to commit once the clock has run out. */
function withAbortableTimeout<T>(work: (signal: AbortSignal) => Promise<T>, ms: number): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(timeoutError(ms)), ms);
  const aborted = new Promise<never>((_, reject) => controller.signal.addEventListener('abort', () => reject(controller.signal.reason)));
  return Promise.race([work(controller.signal), aborted]).finally(() => clearTimeout(timer));
}

/** Reads never abort: they hold no transaction that could commit late. */
const NEVER_ABORTED = new AbortController().signal;

/** Adds deprecations that the request collected (contract version, request shape, fields) to the envelope. */
function withDeprecations(body: unknown, request: FastifyRequest, reply: FastifyReply): unknown {
  const deprecations = request.deprecations;
  if (deprecations.length === 0 || typeof body !== 'object' || body === null) return body;
  if (!reply.hasHeader('deprecation') && deprecations[0].since) reply.header('deprecation', deprecationHeader(deprecations[0].since));
  const envelope = body as { meta?: Record<string, unknown> };
  return { ...envelope, meta: { ...envelope.meta, deprecations } };
}

function admitted(reply: FastifyReply, rateLimitHeaders: Record<string, string>, done: HookHandlerDoneFunction) {
  reply.headers(rateLimitHeaders);
  done();
}

function outcomeOf(status: number): AuditEvent['outcome'] {
  if (status < 400) return 'success';
  return status === 401 || status === 403 ? 'denied' : 'failure';
}

class OperationRoute {
  private readonly containsPhi: boolean;

  constructor(
    private readonly operation: OperationDefinition,
    private readonly handler: Handler<OperationId>,
    private readonly services: GatewayServices,
    private readonly running: RunningHandlers,
  ) {
    this.containsPhi = operation.noPhi !== 'allowed';
  }

  register(app: FastifyInstance) {
    // Callback hooks, answered synchronously on a warm call: an async hook costs a promise and a microtask per request.
    app.route({
      method: this.operation.method,
      url: this.operation.url,
      config: { operationId: this.operation.operationId },
      onRequest: (request, reply, done) => this.admit(request, reply, done),
      handler: (request, reply) => (this.operation.command ? this.running.track(this.runCommand(request, reply)) : this.runRead(request, reply)),
      // As the response is handed to the socket: an onResponse hook would make Fastify listen for every response's 'finish'.
      onSend: (request, reply, _payload, done) => {
        this.record(request, reply);
        done();
      },
    });
  }

  /**
   * Version, identity, access and limits, before any body is read. A warm call (remembered token, cached policy,
   * leased units) is admitted in the same tick without a promise or a closure; otherwise the work continues after I/O.
   * A throw or rejection goes to `done`.
   */
  private admit(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
    const { authenticator } = this.services;
    const authorization = request.headers.authorization;
    // One clock read for the warm checks: each read is a call into the runtime.
    const nowMs = Date.now();
    let authentication: Authentication | null | undefined;
    try {
      this.prepare(request, reply, nowMs);
      refuseRepeatedAuthorization(request.raw.rawHeaders);
      authentication = this.operation.authenticated ? authenticator.authenticateNow(authorization, nowMs) : null;
    } catch (err) {
      return done(err as Error);
    }
    if (authentication === null) return done();
    if (authentication) return this.limit(request, reply, authentication, nowMs, done);
    authenticator.authenticate(authorization).then((later) => this.limit(request, reply, later, Date.now(), done), done);
  }

  private prepare(request: FastifyRequest, reply: FastifyReply, nowMs: number) {
    request.admittedAtMs = nowMs;
    request.deprecations = [];
    request.auditTrail = { resourceType: this.operation.resourceType, resourceIds: [] };
    request.principal = undefined;
    request.recordedInTransaction = false;
    request.audited = false;
    request.replayed = false;
    if (this.containsPhi) reply.header('cache-control', 'no-store');
    request.contractVersion = negotiateVersion(request, reply);
  }

  private limit(request: FastifyRequest, reply: FastifyReply, { principal, policy }: Authentication, nowMs: number, done: HookHandlerDoneFunction) {
    const { usageLimiter } = this.services;
    let headers: Record<string, string> | undefined;
    try {
      request.principal = principal;
      authorize(this.operation, principal, policy);
      headers = usageLimiter.admitNow(policy, this.operation, nowMs);
    } catch (err) {
      return done(err as Error);
    }
    if (headers) return admitted(reply, headers, done);
    usageLimiter.admit(policy, this.operation).then((later) => admitted(reply, later, done), done);
  }

  /** Runs after the body is parsed, like a preValidation hook, without a hook's promise. */
  private validate(request: FastifyRequest) {
    checkContentType(this.operation, request);
    validateRequest(this.operation, request);
  }

  private context(request: FastifyRequest, reply: FastifyReply, db: Kysely<DB>, signal: AbortSignal) {
    return {
      operation: this.operation,
      principal: request.principal,
      params: request.params,
      query: request.query,
      headers: request.headers,
      body: request.body,
      contractVersion: request.contractVersion,
      deprecations: request.deprecations,
      requestId: request.id,
      store: this.storeOf(request, db),
      cursors: this.operation.pagedByCursor ? this.cursorsOf(request) : undefined,
      log: request.log,
      reply,
      signal,
    } as RequestContext<OperationId>;
  }

  /** A command's store holds its transaction; the token endpoint, which has no caller, gets none. */
  private storeOf(request: FastifyRequest, db: Kysely<DB>): TenantStore | undefined {
    const principal = request.principal;
    if (!principal) return undefined;
    if (this.operation.command) return new CommandStore(db as Transaction<DB>, principal, request.auditTrail, this.services.outbox);
    return new TenantStore(db, principal, request.auditTrail);
  }

  /** Bound here, so that no handler can seal or open a cursor for another caller or route. */
  private cursorsOf(request: FastifyRequest): CursorSealer {
    return new CursorSealer(this.services.cursorSeal, request.principal!, this.operation.operationId, request.params as Record<string, string>);
  }

  private serialize(body: unknown, request: FastifyRequest, reply: FastifyReply): unknown {
    return withDeprecations(serializeFor(request.contractVersion, this.operation, body), request, reply);
  }

  /** Whether the session sees this operation's results reduced (openapi.json x-svc-phi); phi sessions never do. */
  private reducesFor(request: FastifyRequest): boolean {
    return this.operation.noPhiSchema !== null && request.principal?.phiMode === 'no_phi';
  }

  /** The one place where a no_phi session's answer is reduced: after the handler, before the version serializer. */
  private async reduced(result: unknown, store: TenantStore): Promise<unknown> {
    return reduceForNoPhi(await result, this.operation.noPhiSchema!, (kind, ids) => store.pseudonyms.handlesFor(kind, ids));
  }

  /** A handler that answers without I/O is answered in the same tick: no promise, no timer. */
  private runRead(request: FastifyRequest, reply: FastifyReply): unknown {
    this.validate(request);
    const context = this.context(request, reply, this.services.db, NEVER_ABORTED);
    const result = this.handler(context);
    const reducing = this.reducesFor(request);
    if (!reducing && !(result instanceof Promise)) return this.answer(result, request, reply);
    const work = reducing ? this.reduced(result, context.store!) : (result as Promise<unknown>);
    const answered = withTimeout(work, this.services.handlerTimeoutMs).then((body) => this.answer(body, request, reply));
    return this.running.track(answered);
  }

  private answer(body: unknown, request: FastifyRequest, reply: FastifyReply): unknown {
    // PHI leaves only once its read is on the audit trail (the buffer refuses when it cannot keep up).
    if (this.containsPhi) this.auditNow(request, 200);
    if (this.operation.responseContentType !== 'text/plain') return this.serialize(body, request, reply);
    reply.type('text/plain; charset=utf-8');
    return body;
  }

  /**
   * A command runs once per idempotency key: its rows, audit record, metering row and stored
   * response commit in one transaction, or nothing does.
   */
  private async runCommand(request: FastifyRequest, reply: FastifyReply) {
    this.validate(request);
    const principal = request.principal!;
    const identity = {
      agencyId: principal.agencyId,
      extensionId: principal.extensionId,
      key: String(request.headers['idempotency-key']),
      operationId: this.operation.operationId,
      // The PHI mode too: a key's stored answer is for one mode, never replayed to the other.
      fingerprint: requestFingerprint(request.method, request.url.split('?')[0], request.body, principal.phiMode),
    };
    const { response, replayed } = await withAbortableTimeout(
      (signal) => runIdempotent(this.services.db, identity, (trx) => this.execute(request, reply, trx, signal), signal),
      this.services.handlerTimeoutMs,
    );
    request.replayed = replayed;
    request.recordedInTransaction = !replayed;
    if (replayed) this.auditNow(request, response.status);
    if (replayed) reply.headers({ ...response.headers, 'idempotent-replayed': 'true' });
    return reply.code(response.status).type('application/json; charset=utf-8').send(response.body);
  }

  private async execute(request: FastifyRequest, reply: FastifyReply, trx: Transaction<DB>, signal: AbortSignal): Promise<CommandLedger> {
    const context = this.context(request, reply, trx, signal);
    const result = await this.handler(context);
    const answer = this.reducesFor(request) ? await this.reduced(result, context.store!) : result;
    const body = JSON.stringify(this.serialize(answer, request, reply));
    const headers: Record<string, string> = {};
    for (const name of REPLAYED_HEADERS) if (reply.hasHeader(name)) headers[name] = String(reply.getHeader(name));
    return {
      audit: this.auditEvent(request, 200),
      metering: this.meteringEvent(request, 200, elapsedMs(request)),
      response: { status: 200, headers, body },
    };
  }

  private auditEvent(request: FastifyRequest, status: number): AuditEvent {
    const principal = request.principal!;
    const trail = request.auditTrail;
    return {
      agencyId: principal.agencyId,
      extensionId: principal.extensionId,
      operationId: this.operation.operationId,
      resourceType: trail.resourceType,
      resourceIds: trail.resourceIds,
      outcome: outcomeOf(status),
      status,
      requestId: request.id,
      phiMode: principal.phiMode,
      sourceSystem: trail.sourceSystem ?? null,
      externalReferenceId: trail.externalReferenceId ?? null,
    };
  }

  private meteringEvent(request: FastifyRequest, status: number, durationMs: number): MeteringEvent {
    const principal = request.principal!;
    return {
      agencyId: principal.agencyId,
      extensionId: principal.extensionId,
      operationId: this.operation.operationId,
      status,
      // A replay runs nothing, so it costs nothing.
      costUnits: request.replayed ? 0 : this.operation.costUnits,
      durationMs,
      requestId: request.id,
      occurredAtMs: request.admittedAtMs,
    };
  }

  private auditNow(request: FastifyRequest, status: number) {
    this.services.audit.push(this.auditEvent(request, status));
    request.audited = true;
  }

  /** Every call of a known principal is metered; refused and failed commands and PHI reads are audited too. */
  private record(request: FastifyRequest, reply: FastifyReply) {
    if (!request.principal || request.recordedInTransaction) return;
    this.services.metering.push(this.meteringEvent(request, reply.statusCode, elapsedMs(request)));
    if (request.audited || !(this.operation.command || this.containsPhi)) return;
    try {
      this.services.audit.push(this.auditEvent(request, reply.statusCode));
    } catch (err) {
      request.log.error({ err }, 'audit of a refused call was not recorded');
    }
  }
}

/**
 * Registers every operation of the contract, from the generated route table, behind the gateway.
 * Returns a drain that resolves once no handler is running (each is bounded by the handler timeout).
 */
export function registerOperations(app: FastifyInstance, handlers: Handlers, services: GatewayServices): () => Promise<void> {
  const running = new RunningHandlers();
  for (const operation of Object.values(operations) as OperationDefinition[]) {
    new OperationRoute(operation, handlers[operation.operationId] as Handler<OperationId>, services, running).register(app);
  }
  return () => running.drain();
}
