import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

/** PGlite does not lock its data directory: two processes on one directory silently lose writes. */
export interface DataDirLock {
  readonly path: string;
  release(): void;
}

interface LockOwner {
  pid: number;
  hostname: string;
  startedAt: string;
}

export const LOCK_FILE = 'extension-api.lock';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readOwner(path: string): LockOwner | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as LockOwner;
  } catch {
    return undefined; // vanished, or half-written by a process that died while creating it
  }
}

function tryCreate(path: string, owner: LockOwner): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    writeSync(fd, JSON.stringify(owner));
  } finally {
    closeSync(fd);
  }
  return true;
}

function heldByOther(dir: string, path: string, owner: LockOwner | undefined): Error | undefined {
  if (!owner || typeof owner.pid !== 'number') return undefined;
  // A pid can only be checked on its own host, so a lock from another host is taken as held.
  if (owner.hostname === hostname() && !isAlive(owner.pid)) return undefined;
  return new Error(
    `The embedded database at ${dir} is in use by process ${owner.pid} on ${owner.hostname} (since ${owner.startedAt}). ` +
      `Stop that process, or set DATABASE_URL to use PostgreSQL. If no such process runs, delete ${path}.`,
  );
}

/** Takes the data directory's lock file, taking over a stale one left by a dead process. */
export function acquireDataDirLock(dir: string): DataDirLock {
  const path = join(dir, LOCK_FILE);
  const owner: LockOwner = { pid: process.pid, hostname: hostname(), startedAt: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    if (tryCreate(path, owner)) return { path, release: () => releaseIfOurs(path, owner) };
    const error = heldByOther(dir, path, readOwner(path));
    if (error) throw error;
    rmSync(path, { force: true });
  }
  throw new Error(`Could not take the lock file ${path}: it keeps reappearing; is another process starting on ${dir}?`);
}

function releaseIfOurs(path: string, owner: LockOwner): void {
  const current = readOwner(path);
  if (current?.pid === owner.pid && current.startedAt === owner.startedAt) rmSync(path, { force: true });
}
