import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { acquireDataDirLock, LOCK_FILE } from '../../src/db/data-dir-lock.js';
import { openDatabase } from '../../src/db/database.js';

// The lock guards the embedded store only: once, in the PGlite run of the suite.
const embeddedOnly = { skip: process.env.TEST_DATABASE_URL ? 'embedded store only: covered by the PGlite run' : false };

// These use PGlite on disk whatever TEST_DATABASE_URL selects: the lock guards only the embedded engine.

function tempDir(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'ext-api-lock-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '']);
  if (child.pid === undefined) throw new Error('could not spawn a child process');
  return child.pid;
}

/** Leaves a lock file as another process would have, by default one that has since died on this host. */
function writeForeignLock(dir: string, host = hostname()): void {
  const owner = { pid: deadPid(), hostname: host, startedAt: '2026-01-01T00:00:00.000Z' };
  writeFileSync(join(dir, LOCK_FILE), JSON.stringify(owner));
}

t.test('a second lock on the same directory is refused while the first is held', embeddedOnly, async (t) => {
  const dir = tempDir(t);
  const lock = acquireDataDirLock(dir);
  t.throws(() => acquireDataDirLock(dir), {
    message: `The embedded database at ${dir} is in use by process ${process.pid}`,
  });
  t.throws(() => acquireDataDirLock(dir), { message: /Stop that process, or set DATABASE_URL/ });
  lock.release();
  t.notOk(existsSync(join(dir, LOCK_FILE)), 'release removes the lock file');
  acquireDataDirLock(dir).release();
});

t.test('a stale lock left by a dead process is taken over', embeddedOnly, async (t) => {
  const dir = tempDir(t);
  writeForeignLock(dir);
  const lock = acquireDataDirLock(dir);
  t.equal(JSON.parse(readFileSync(lock.path, 'utf8')).pid, process.pid);
  lock.release();
});

t.test('a lock held on another host is not taken over', embeddedOnly, async (t) => {
  const dir = tempDir(t);
  writeForeignLock(dir, `not-${hostname()}`);
  t.throws(() => acquireDataDirLock(dir), { message: /in use by process \d+ on not-/ });
});

t.test(
  'PGlite on disk: refused while open elsewhere; after close it reopens, over a stale lock, with its data',
  embeddedOnly,
  async (t) => {
    const dataDir = join(tempDir(t), 'data');
    const first = await openDatabase({ dataDir });
    t.teardown(() => first.close());
    t.equal(first.engine, 'pglite');
    await first.db.insertInto('agencies').values({ id: 'a1', name: 'Persisted' }).execute();
    await t.rejects(openDatabase({ dataDir }), {
      message: `The embedded database at ${dataDir} is in use by process ${process.pid}`,
    });
    await first.close();
    t.notOk(existsSync(join(dataDir, LOCK_FILE)), 'close releases the lock');
    writeForeignLock(dataDir);
    const second = await openDatabase({ dataDir });
    t.teardown(() => second.close());
    const row = await second.db.selectFrom('agencies').select('name').where('id', '=', 'a1').executeTakeFirst();
    t.same(row, { name: 'Persisted' });
  },
);
