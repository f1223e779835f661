import { PlatformError } from '../../shared/platform-error.js';

function timeoutError(ms: number) {
  return new PlatformError(
    'PLATFORM_TIMEOUT',
    `The operation did not finish within ${ms} ms; nothing of a command was committed.`,
  );
}

/** Reads are only raced against the clock; nothing they started needs cancelling. */
export function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
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
export function withAbortableTimeout<T>(work: (signal: AbortSignal) => Promise<T>, ms: number): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(timeoutError(ms)), ms);
  const aborted = new Promise<never>((_, reject) =>
    controller.signal.addEventListener('abort', () => reject(controller.signal.reason)),
  );
  return Promise.race([work(controller.signal), aborted]).finally(() => clearTimeout(timer));
}

/** Reads never abort: they hold no transaction that could commit late. */
export const NEVER_ABORTED = new AbortController().signal;
