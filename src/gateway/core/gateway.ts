import type { Logger } from 'pino';
import { operations, type OperationDefinition, type OperationId } from '../../generated/contract.js';
import { PlatformError } from '../../shared/platform-error.js';
import type { Handler, Handlers } from './handler.js';
import { OperationPipeline, type GatewayServices } from './pipeline.js';
import type { CallAdmission } from './admission.js';
import { RunningHandlers } from './running-handlers.js';
import { CompletedKeys } from './completed-keys.js';

/** The refusal of a call that arrives while the service shuts down. */
export function shuttingDown(): PlatformError {
  return new PlatformError(
    'PLATFORM_SERVICE_UNAVAILABLE',
    'The server is shutting down; retry on another instance.',
    undefined,
    { 'retry-after': '1' },
  );
}

/**
 * Every operation of the contract, from the generated route table, behind its pipeline: what each transport serves
 * (operation-routes.ts over HTTP, direct-call.ts in process). Built once per app, or by a worker or CLI on its own.
 */
export class Gateway {
  private readonly pipelines = new Map<string, OperationPipeline>();
  private readonly running = new RunningHandlers();
  private readonly completedKeys = new CompletedKeys();
  private closing = false;

  constructor(
    handlers: Handlers,
    services: GatewayServices,
    /** The parent of a direct call's logger. */
    readonly log: Logger,
    /** Admission rules of operations whose family adds some (a governed query's access and cost). */
    admissions: Partial<Record<OperationId, CallAdmission>> = {},
  ) {
    for (const operation of Object.values(operations) as OperationDefinition[]) {
      const handler = handlers[operation.operationId] as Handler<OperationId>;
      this.pipelines.set(
        operation.operationId,
        new OperationPipeline(
          operation,
          handler,
          services,
          this.running,
          this.completedKeys,
          admissions[operation.operationId],
        ),
      );
    }
  }

  /** Undefined for a name that is not an operation of the contract (a caller's typo). */
  pipeline(operationId: string): OperationPipeline | undefined {
    return this.pipelines.get(operationId);
  }

  all(): Iterable<OperationPipeline> {
    return this.pipelines.values();
  }

  /** Shutdown waits for tracked work (each handler is bounded by the handler timeout). */
  track<T>(work: Promise<T>): Promise<T> {
    return this.running.track(work);
  }

  /** Throws when the gateway takes no more direct calls; HTTP calls are refused before it, as the server closes. */
  refuseWhenClosing() {
    if (this.closing) throw shuttingDown();
  }

  /** Takes no more direct calls and resolves once no handler is running, so the buffers can close after it. */
  close(): Promise<void> {
    this.closing = true;
    return this.running.drain();
  }
}
