import { operations, type OperationDefinition, type OperationId } from '../generated/contract.js';
import { PlatformError } from '../shared/platform-error.js';
import type { Handler, Handlers } from './handler.js';
import { OperationPipeline, type GatewayServices } from './pipeline.js';
import { RunningHandlers } from './running-handlers.js';

/** The refusal of a call that arrives while the service shuts down. */
export function shuttingDown(): PlatformError {
  return new PlatformError('PLATFORM_SERVICE_UNAVAILABLE', 'The server is shutting down; retry on another instance.', undefined, { 'retry-after': '1' });
}

/**
 * Every operation of the contract, from the generated route table, behind its pipeline: what each transport serves
 * (operation-routes.ts over HTTP). Built once per app, or by a worker or CLI on its own.
 */
export class Gateway {
  private readonly pipelines = new Map<string, OperationPipeline>();
  private readonly running = new RunningHandlers();

  constructor(handlers: Handlers, services: GatewayServices) {
    for (const operation of Object.values(operations) as OperationDefinition[]) {
      const handler = handlers[operation.operationId] as Handler<OperationId>;
      this.pipelines.set(operation.operationId, new OperationPipeline(operation, handler, services, this.running));
    }
  }

  all(): Iterable<OperationPipeline> {
    return this.pipelines.values();
  }

  /** Resolves once no handler is running, so the buffers can close after it. */
  close(): Promise<void> {
    return this.running.drain();
  }
}
