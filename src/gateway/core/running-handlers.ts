/**
 * Handlers still running. A client that hangs up leaves its handler running, and the server's close does not wait
 * for it: shutdown waits here before the buffers and the database close under it.
 * A count, not a set of promises: no entry and no closure per request on the hot path.
 */
export class RunningHandlers {
  private count = 0;
  private idle: Promise<void> | undefined;
  private wakeIdle: (() => void) | undefined;
  private readonly settled = () => {
    if (--this.count > 0 || !this.wakeIdle) return;
    this.wakeIdle();
    this.idle = this.wakeIdle = undefined;
  };

  track<T>(work: Promise<T>): Promise<T> {
    this.count++;
    work.then(this.settled, this.settled);
    return work;
  }

  /** Resolves once no handler is running; any number of callers may wait. */
  drain(): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    return (this.idle ??= new Promise<void>((resolve) => (this.wakeIdle = resolve)));
  }
}
