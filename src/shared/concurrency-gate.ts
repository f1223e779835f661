/** At most `running` tasks at once and `waiting` more in line; past that, a task is refused at once with `refusal()`. */
export class ConcurrencyGate {
  private running = 0;
  private readonly line: (() => void)[] = [];

  constructor(
    private readonly limits: { running: number; waiting: number },
    private readonly refusal: () => Error,
  ) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running < this.limits.running) this.running++;
    else if (this.line.length < this.limits.waiting) await new Promise<void>((resolve) => this.line.push(resolve));
    else throw this.refusal();
    try {
      return await task();
    } finally {
      // The place goes to the next in line, if any, without being freed in between.
      const next = this.line.shift();
      if (next) next();
      else this.running--;
    }
  }
}
