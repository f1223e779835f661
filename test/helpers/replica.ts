import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Teardown } from './database.js';

/** The newest PostgreSQL server binaries Debian installed, as scripts/postgres-temp.sh finds them. */
function serverBinaries(): string {
  const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
  return join('/usr/lib/postgresql', versions[0], 'bin');
}

/** As the `postgres` user when root: PostgreSQL refuses to run as root. */
function asServer(command: string, args: string[]): void {
  const [file, argv] =
    process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  const run = spawnSync(file, argv, { encoding: 'utf8', cwd: '/' });
  if (run.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${run.stderr || run.stdout}`);
}

export interface StreamingReplica {
  /** A connection URL of `database` on the replica. */
  urlOf(database: string): string;
  /** Changes how long the replica waits before applying each commit (recovery_min_apply_delay), effective at once. */
  delayApply(ms: number): void;
}

/**
 * A hot standby of the PostgreSQL test cluster (the primary's unix socket dir is the test URL's `host`), streaming from
 * it: taken with pg_basebackup, started on its own socket, stopped and deleted at t's teardown.
 */
export function startStreamingReplica(t: Teardown, primaryUrl: string): StreamingReplica {
  const socketDir = new URL(primaryUrl).searchParams.get('host');
  if (!socketDir) throw new Error('the test cluster is reached by a unix socket (scripts/postgres-temp.sh)');
  const dir = mkdtempSync(join(tmpdir(), 'replica-'));
  const data = join(dir, 'data');
  if (process.getuid?.() === 0) chownSync(dir, Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), 0);
  const bin = serverBinaries();
  asServer(join(bin, 'pg_basebackup'), [
    '-h',
    socketDir,
    '-U',
    'postgres',
    '-D',
    data,
    '-R',
    '-X',
    'stream',
    '--checkpoint=fast',
    '--no-sync',
  ]);
  appendFileSync(`${data}/postgresql.auto.conf`, "hot_standby = on\nrecovery_min_apply_delay = '0'\n");
  asServer(join(bin, 'pg_ctl'), [
    '-D',
    data,
    '-l',
    join(dir, 'server.log'),
    '-w',
    '-t',
    '60',
    'start',
    '-o',
    `-c listen_addresses='' -k ${dir} -c fsync=off`,
  ]);
  t.teardown(() => {
    spawnSync(
      process.getuid?.() === 0 ? 'runuser' : join(bin, 'pg_ctl'),
      process.getuid?.() === 0
        ? ['-u', 'postgres', '--', join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', 'stop']
        : ['-D', data, '-m', 'immediate', 'stop'],
      { cwd: '/' },
    );
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    urlOf: (database) => `postgresql://postgres@localhost/${database}?host=${dir}`,
    delayApply(ms) {
      appendFileSync(`${data}/postgresql.auto.conf`, `recovery_min_apply_delay = '${ms}ms'\n`);
      asServer(join(bin, 'pg_ctl'), ['-D', data, 'reload']);
    },
  };
}
