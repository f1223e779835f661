import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { openDatabase } from '../../src/db/database.js';

/** The real server process (src/server.ts), as an operator starts it: key file, sealing at start, refusals. */
t.setTimeout(600_000);
const root = join(import.meta.dirname, '../..');

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

interface Run {
  url: string;
  stdout: () => string;
  /** Waits until the process exits (it is asked to when `stop`): its exit code, or 'still running' after a minute. */
  exited: (stop?: boolean) => Promise<number | null | 'still running'>;
  /** True once /livez answers; false when the process exited first. */
  ready: () => Promise<boolean>;
}

async function server(t: Test, env: Record<string, string>): Promise<Run> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: '',
      SECRETS_KEY: '',
      SECRETS_KEY_FILE: '',
      SECRETS_KEY_PREVIOUS: '',
      PORT: String(port),
      LOG_LEVEL: 'info',
      TOKEN_ISSUER: 'http://extension-api.test',
      SHED_EVENT_LOOP_DELAY_MS: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.teardown(() => void child.kill('SIGKILL'));
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    stdout: () => output,
    exited: (stop = false) => {
      if (stop) child.kill('SIGTERM');
      return Promise.race([exit, sleep(60_000, 'still running' as const)]);
    },
    ready: async () => {
      for (const deadline = Date.now() + 240_000; Date.now() < deadline; await sleep(200)) {
        if (child.exitCode !== null) return false;
        if (
          await fetch(`${url}/livez`).then(
            (r) => r.ok,
            () => false,
          )
        )
          return true;
      }
      return false;
    },
  };
}

function demoCredentials(stdout: string) {
  return { client_id: /client_id: +(\S+)/.exec(stdout)?.[1], client_secret: /client_secret: +(\S+)/.exec(stdout)?.[1] };
}

async function token(url: string, credentials: ReturnType<typeof demoCredentials>): Promise<string> {
  const res = await fetch(`${url}/api/v1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', ...credentials, agency_id: 'demo', phi_mode: 'no_phi' }),
  });
  return ((await res.json()) as { access_token: string }).access_token;
}

async function patients(url: string, accessToken: string, query: string) {
  const res = await fetch(`${url}/api/v1/ext/patients?${query}`, {
    headers: { authorization: `Bearer ${accessToken}` },
  });
  return { status: res.status, body: (await res.json()) as { meta?: { next_cursor?: string } } };
}

/** Every stored secret column, as the database holds it. */
async function storedSecrets(dataDir: string): Promise<Record<string, unknown>[]> {
  const database = await openDatabase({ dataDir, migrate: false });
  try {
    const keys = await database.db.selectFrom('signing_keys').selectAll().execute();
    const secrets = await database.db.selectFrom('service_secrets').selectAll().execute();
    return [...keys, ...secrets];
  } finally {
    await database.close();
  }
}

const oneLine = (t: Test, run: Run, pattern: RegExp) => {
  const lines = run.stdout().trim().split('\n');
  t.match(JSON.parse(lines.at(-1)!).msg, pattern);
  t.notMatch(run.stdout(), /\n\s+at /, 'no stack trace');
};

// Each start is a whole process (PGlite on disk, the demo seed): once, in the PGlite run of the suite.
const embeddedRun = { skip: process.env.TEST_DATABASE_URL ? 'covered by the PGlite run' : false };

t.test(
  'embedded store: a key file is created beside DATA_DIR (mode 600), the secrets are sealed, and a restart reuses it',
  embeddedRun,
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'secrets-start-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const dataDir = join(dir, 'data');
    const keyFile = `${dataDir}.secrets-key`;

    const first = await server(t, { DATA_DIR: dataDir });
    t.ok(await first.ready(), first.stdout());
    t.match(
      first.stdout(),
      /Created the key-encryption key file .*data\.secrets-key \(mode 600\)/,
      'says it created the key file',
    );
    t.equal(
      (statSync(keyFile, { throwIfNoEntry: false })?.mode ?? 0) & 0o777,
      0o600,
      'the key file is read-write for its owner only',
    );
    const key = existsSync(keyFile) ? readFileSync(keyFile, 'utf8') : undefined;
    const credentials = demoCredentials(first.stdout());
    const accessToken = await token(first.url, credentials);
    const page = await patients(first.url, accessToken, 'limit=1');
    t.equal(page.status, 200);
    const cursor = page.body.meta!.next_cursor!;
    t.ok(cursor, 'a cursor: the cursor key exists');
    t.equal(await first.exited(true), 0);

    const stored = await storedSecrets(dataDir);
    t.equal(
      stored.length,
      5,
      "one signing key, the cursor key, the MCP authorization server's cookie key, the console's cookie and form-token keys",
    );
    for (const row of stored) {
      t.notMatch(JSON.stringify(row), /PRIVATE KEY/, 'no PEM');
      t.notOk(
        Object.values(row).some((value) => value instanceof Uint8Array),
        'no raw key bytes',
      );
      t.match(row.private_key_sealed ?? row.secret_sealed, /^v1\.[0-9a-f]{12}\./);
    }

    const second = await server(t, { DATA_DIR: dataDir });
    t.ok(await second.ready(), second.stdout());
    t.notMatch(second.stdout(), /Created the key-encryption key file/, 'the file is reused');
    t.equal(key && readFileSync(keyFile, 'utf8'), key);
    t.equal(
      (await patients(second.url, accessToken, 'limit=1')).status,
      200,
      'a token from before the restart verifies',
    );
    t.equal(
      (await patients(second.url, accessToken, `limit=1&cursor=${cursor}`)).status,
      200,
      'a cursor from before the restart opens',
    );
    t.equal(await second.exited(true), 0);

    const wrongKey = randomBytes(32).toString('base64');
    const wrong = await server(t, { DATA_DIR: dataDir, SECRETS_KEY: wrongKey });
    t.equal(await wrong.exited(), 1, 'a wrong key stops the start');
    oneLine(
      t,
      wrong,
      /^signing_keys\/\S+ is sealed under key-encryption key [0-9a-f]{12}, which is not configured \(configured: [0-9a-f]{12} \(SECRETS_KEY\)\)/,
    );
  },
);

t.test('PostgreSQL without a key-encryption key: refused in one line, before connecting', embeddedRun, async (t) => {
  const run = await server(t, { DATABASE_URL: 'postgresql://nobody@127.0.0.1:1/unreachable' });
  t.equal(await run.exited(), 1);
  oneLine(t, run, /^DATABASE_URL is set but neither SECRETS_KEY nor SECRETS_KEY_FILE is/);
});
