import { housekeeping } from './housekeeping.js';
import { webhooks } from './webhooks.js';
import type { Worker } from './worker.js';

/**
 * The workers that need nothing but the database (and the key-encryption keys): each runs in every server unless IN_PROCESS_WORKERS leaves it out,
 * or as its own process (`npm run worker -- <name>`). The buffers' flushers are not here: they belong to the server
 * whose memory they write (src/services.ts).
 */
const WORKERS: Record<string, () => Worker> = {
  housekeeping,
  webhooks: () => webhooks(),
};

export const workerNames = Object.keys(WORKERS);

const isWorker = (name: string) => Object.hasOwn(WORKERS, name);
const theNames = () => `the workers are: ${workerNames.join(', ')} (the metering and audit flushers run only inside the server)`;

export function createWorker(name: string): Worker {
  if (!isWorker(name)) throw new Error(`unknown worker "${name}"; ${theNames()}`);
  return WORKERS[name]();
}

/** The workers a server runs beside its requests: `all`, or the names IN_PROCESS_WORKERS lists. */
export function inProcessWorkers(names: 'all' | string[]): Worker[] {
  const unknown = names === 'all' ? [] : names.filter((name) => !isWorker(name));
  if (unknown.length > 0) throw new Error(`IN_PROCESS_WORKERS names unknown workers (${unknown.join(', ')}): use all, none or a list; ${theNames()}`);
  return (names === 'all' ? workerNames : names).map(createWorker);
}
