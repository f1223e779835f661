import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { pino } from 'pino';
import t from 'tap';
import { redactingDatabaseValues, safeErrorSerializers, safeLoggerOptions } from '../../src/db/database-error-log.js';
import { testDatabase } from '../helpers/database.js';

const { db } = await testDatabase();
const CANARY = 'Jane Canary 1941-05-17';

/**
 * The lines a logger writes, as text: what an operator's log pipeline would receive. `root`: a process's own logger
 * (src/server.ts); otherwise the app's wrapping of a logger it is given (src/app.ts).
 */
function capturedLogger(root: boolean) {
  const lines: string[] = [];
  const stream = new Writable({
    write: (chunk, _encoding, done) => {
      lines.push(String(chunk));
      done();
    },
  });
  return {
    lines,
    logger: root
      ? pino({ level: 'info', ...safeLoggerOptions }, stream)
      : redactingDatabaseValues(pino({ level: 'info' }, stream)),
  };
}

async function databaseError(statement: Promise<unknown>): Promise<Error> {
  try {
    await statement;
  } catch (err) {
    return err as Error;
  }
  throw new Error('the statement did not fail');
}

await sql`create table error_log_probe (id text primary key, n int, constraint error_log_probe_n check (n > 0))`.execute(
  db,
);
await sql`insert into error_log_probe values (${CANARY}, 1)`.execute(db);

const failures: [string, () => Promise<unknown>][] = [
  [
    'jsonb that cannot be stored (the where quotes the JSON)',
    () => sql`select ${JSON.stringify({ text: `${CANARY}\u0000` })}::jsonb`.execute(db),
  ],
  ['a value of the wrong type (the message quotes it)', () => sql`select ${CANARY}::int`.execute(db)],
  [
    'a duplicate key (the detail quotes the row)',
    () => sql`insert into error_log_probe values (${CANARY}, 2)`.execute(db),
  ],
  [
    'a check constraint (the detail quotes the row)',
    () => sql`insert into error_log_probe values (${`${CANARY}-2`}, -1)`.execute(db),
  ],
];

for (const [what, statement] of failures) {
  t.test(`${what}: logged with its code and schema names, never the value`, async (t) => {
    const err = await databaseError(statement());
    t.match(JSON.stringify({ ...err, message: err.message }), /Canary/, 'the raw error does quote the value');
    const app = capturedLogger(false);
    app.logger.error({ err }, 'statement failed');
    app.logger.child({ requestId: 'req_1' }).error({ err }, 'failed');
    app.logger.error({ err: new Error('a handler failed', { cause: err }) }, 'wrapped');
    const root = capturedLogger(true);
    root.logger.error({ err }, 'statement failed');
    root.logger.child({ requestId: 'req_1' }).error(err);
    root.logger.error(err, 'with its own message');
    const lines = [...app.lines, ...root.lines];
    t.equal(lines.length, 6);
    for (const line of lines) {
      // The canary's date, not any four digits: a line's millisecond timestamp can hold 1941.
      t.notMatch(line, /Canary|1941-05-17/, line);
      t.match(JSON.parse(line), { err: { message: String } });
    }
    t.match(JSON.parse(lines[0]).err, { code: /^[0-9A-Z]{5}$/ });
  });
}

t.test('schema names the error itself carries stay readable', async (t) => {
  const err = await databaseError(sql`insert into error_log_probe values (${CANARY}, 2)`.execute(db));
  const serialized = safeErrorSerializers.err(err) as unknown as Record<string, unknown>;
  t.match(serialized, { code: '23505', constraint: 'error_log_probe_pkey', table: 'error_log_probe' });
  t.match(String(serialized.message), /"error_log_probe_pkey"/);
  t.notOk('detail' in serialized);
});

t.test("errors that are not the database's are logged as they are", async (t) => {
  const { lines, logger } = capturedLogger(false);
  logger.error({ err: new Error('plain "quoted" message') }, 'failed');
  t.match(JSON.parse(lines[0]).err.message, 'plain "quoted" message');
});
