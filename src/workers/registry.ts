import type { Gateway } from '../gateway/core/gateway.js';
import { housekeeping } from './housekeeping.js';
import { webhooks } from './webhooks.js';
import { PROPOSAL_EXECUTOR, proposalExecutor } from './proposal-executor.js';
import type { Worker } from './worker.js';

/**
 * The workers that need nothing but the database (and the key-encryption keys): each runs in every server unless IN_PROCESS_WORKERS leaves it out,
 * or as its own process (`npm run worker -- <name>`). The buffers' flushers are not here: they belong to the server
 * whose memory they write (started with the rest in src/app.ts).
 */
const WORKERS: Record<string, () => Worker> = {
  housekeeping,
  webhooks: () => webhooks(),
};

/** Workers that run operations through the server's gateway, so only inside a server. */
const GATEWAY_WORKERS: Record<string, (gateway: Gateway) => Worker> = {
  [PROPOSAL_EXECUTOR]: (gateway) => proposalExecutor(gateway),
};

export const workerNames = Object.keys(WORKERS);

const isWorker = (name: string) => Object.hasOwn(WORKERS, name);
const isGatewayWorker = (name: string) => Object.hasOwn(GATEWAY_WORKERS, name);
const theNames = () =>
  `the workers are: ${workerNames.join(', ')} (inside the server only: ${Object.keys(GATEWAY_WORKERS).join(', ')}, and the metering and audit flushers)`;

export function createWorker(name: string): Worker {
  if (isGatewayWorker(name))
    throw new Error(
      `worker "${name}" runs operations through a server's gateway, so it runs inside the server (IN_PROCESS_WORKERS); ${theNames()}`,
    );
  if (!isWorker(name)) throw new Error(`unknown worker "${name}"; ${theNames()}`);
  return WORKERS[name]();
}

/** The workers a server runs beside its requests: `all`, or the names IN_PROCESS_WORKERS lists. */
export function inProcessWorkers(names: 'all' | string[]): Worker[] {
  const unknown = names === 'all' ? [] : names.filter((name) => !isWorker(name) && !isGatewayWorker(name));
  if (unknown.length > 0)
    throw new Error(
      `IN_PROCESS_WORKERS names unknown workers (${unknown.join(', ')}): use all, none or a list; ${theNames()}`,
    );
  return (names === 'all' ? workerNames : names.filter(isWorker)).map(createWorker);
}

/** The workers of IN_PROCESS_WORKERS that need the server's gateway, started once it exists. */
export function inProcessGatewayWorkers(names: 'all' | string[], gateway: Gateway): Worker[] {
  return (names === 'all' ? Object.keys(GATEWAY_WORKERS) : names.filter(isGatewayWorker)).map((name) =>
    GATEWAY_WORKERS[name](gateway),
  );
}
