import { setTimeout as sleep } from 'node:timers/promises';

/** Waits for `check` to hold, asking again every `everyMs`; past the deadline it throws, naming `what`. */
export async function until(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 20_000,
  everyMs = 20,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(everyMs);
  }
}
