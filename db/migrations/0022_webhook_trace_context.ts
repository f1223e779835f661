import { sql, type Kysely } from 'kysely';

/**
 * The trace of the call that emitted an event, in W3C Trace Context form (the traceparent and tracestate headers of
 * that call's span): each delivery attempt of the event is a span of that trace, and the receiver gets its traceparent.
 * Null when the call was not traced (tracing off, or an event written outside a call: the admin CLI, an importer).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('webhook_events')
    .addColumn('traceparent', 'text', (c) => c.check(sql`traceparent ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$'`))
    .addColumn('tracestate', 'text')
    .execute();
  await db.schema
    .alterTable('webhook_events')
    .addCheckConstraint('webhook_events_tracestate_with_parent', sql`tracestate is null or traceparent is not null`)
    .execute();
}
