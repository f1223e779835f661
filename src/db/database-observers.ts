import type { CompiledQuery, LogEvent } from 'kysely';

/** What a database reports of its work to whoever watches it (metrics, traces, load shedding). */
export interface DatabaseObserver {
  /** Each statement once it finished: its text (never its parameters) and how long it ran. */
  query?(sql: string, durationMs: number, failed: boolean): void;
  /** Each statement as sent, parameters included: for checks of what statements touch (never for logs or metrics). */
  statement?(query: CompiledQuery): void;
  /** PostgreSQL: how long a request waited for a connection of the pool. */
  connectionWait?(waitMs: number): void;
}

/** The observers of one open database; Kysely's `log` option feeds them, so both engines report the same way. */
export class DatabaseObservers {
  private list: DatabaseObserver[] = [];

  /** Adds an observer; the function returned removes it (an app that closes stops watching a shared database). */
  add(observer: DatabaseObserver): () => void {
    this.list = [...this.list, observer];
    return () => {
      this.list = this.list.filter((o) => o !== observer);
    };
  }

  readonly log = (event: LogEvent): void => {
    for (const observer of this.list) {
      observer.query?.(event.query.sql, event.queryDurationMillis, event.level === 'error');
      observer.statement?.(event.query);
    }
  };

  connectionWait(waitMs: number): void {
    for (const observer of this.list) observer.connectionWait?.(waitMs);
  }
}
