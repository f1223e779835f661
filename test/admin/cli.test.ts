import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import pg from 'pg';
import t, { type Test } from 'tap';
import { acquireDataDirLock } from '../../src/db/data-dir-lock.js';
import { NON_COMMAND_CAPABILITIES } from '../../src/identity/grants.js';
import { clientKey, jwksFile, jwksOf } from '../helpers/client-keys.js';
import { freePort } from '../helpers/ports.js';
import { connectedClient } from '../mcp/mcp-helpers.js';

/** The real script in a child process, as an operator runs it; every command's logic is in commands.test.ts. */
// Each run starts tsx and opens the database (PGlite: seconds each on a busy machine).
t.setTimeout(300_000);
const TSX = join(import.meta.dirname, '../../node_modules/tsx/dist/cli.mjs');
const SCRIPT = join(import.meta.dirname, '../../scripts/admin.ts');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function admin(env: Record<string, string>, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const childEnv = {
      ...process.env,
      DATABASE_URL: '',
      SECRETS_KEY: '',
      SECRETS_KEY_FILE: '',
      SECRETS_KEY_PREVIOUS: '',
      ...env,
    };
    execFile(process.execPath, [TSX, SCRIPT, ...args], { env: childEnv }, (err, stdout, stderr) => {
      resolve({ code: err ? Number(err.code) : 0, stdout, stderr });
    });
  });
}

/** stdout must be exactly one JSON object. */
function json(t: Test, run: Run) {
  t.equal(run.stdout.trim().split('\n').length, 1, 'one line on stdout');
  return JSON.parse(run.stdout);
}

async function exercise(t: Test, env: Record<string, string>) {
  const created = await admin(
    env,
    'agency',
    'create',
    '--id',
    'acme',
    '--name',
    'Acme Home Health',
    '--service-zips',
    '02110,02111',
    '--json',
  );
  t.equal(created.code, 0, created.stderr);
  t.match(json(t, created), {
    agency_id: 'acme',
    name: 'Acme Home Health',
    office_id: /^off_[\w-]{22}$/,
    service_zips: ['02110', '02111'],
  });

  const integration = await admin(env, 'integration', 'create', '--agency', 'acme', '--name', 'Intake bot', '--json');
  t.equal(integration.code, 0, integration.stderr);
  const credentials = json(t, integration);
  t.match(credentials, {
    client_id: /^cli_/,
    client_secret: /^sk_[A-Za-z0-9_-]{43}$/,
    extension_id: /^ext_/,
    agency_id: 'acme',
  });

  const listed = await admin(env, 'integration', 'list', '--agency', 'acme', '--json');
  const { integrations } = json(t, listed);
  t.match(integrations, [
    {
      extension_id: credentials.extension_id,
      client_ids: [credentials.client_id],
      phi_modes: ['no_phi'],
      status: 'active',
      contract_version: '2',
    },
  ]);
  t.same(integrations[0].capabilities, [...NON_COMMAND_CAPABILITIES], 'commands are not granted by default');
  t.notOk(
    listed.stdout.includes(credentials.client_secret) || listed.stdout.includes('$scrypt$'),
    'no secret, no hash',
  );

  const text = await admin(env, 'agency', 'list');
  t.equal(text.code, 0);
  t.match(text.stdout, /id: +acme\nname: +Acme Home Health/);

  const csv = join(mkdtempSync(join(tmpdir(), 'admin-cli-csv-')), 'py2025.csv');
  t.teardown(() => rmSync(dirname(csv), { recursive: true, force: true }));
  writeFileSync(
    csv,
    [
      'measure_id,measure_name,measure_type,cohort,agency_value,achievement_threshold,benchmark,baseline_value',
      'DYSPNEA,Improvement in Dyspnea,OASIS,smaller,85,60,80,70',
      'ORAL_MEDS,Oral Medications,OASIS,smaller,70,60,80,65',
      'DC_FUNCTION,Discharge Function,OASIS,smaller,45,50,70,48',
      'PPH,"Potentially Preventable Hospitalization, within stay",Claims,smaller,7.1,9.4,6.2,8.0',
    ].join('\n'),
  );
  const refused = await admin(
    env,
    'quality',
    'import',
    '--agency',
    'acme',
    '--performance-year',
    '2025',
    csv,
    '--json',
  );
  t.equal(refused.code, 1);
  t.match(
    json(t, refused).error.message,
    /^py2025\.csv was not imported \(nothing was written\):\n {2}file, column measure_id: missing measures of the smaller-volume cohort for PY2025, CMS-1780-F: DTC_PAC$/,
  );
  appendFileSync(csv, '\nDTC_PAC,Discharge to Community,Claims,smaller,55,40,60,30\n');
  const imported = await admin(
    env,
    'quality',
    'import',
    '--agency',
    'acme',
    '--performance-year',
    '2025',
    csv,
    '--json',
  );
  t.equal(imported.code, 0, imported.stderr);
  t.match(json(t, imported), {
    agency_id: 'acme',
    performance_year: 2025,
    cohort: 'smaller',
    measures: 5,
    superseded_import_id: null,
  });

  const era = join(import.meta.dirname, '../fixtures/era/medicare-home-health-crlf.835');
  const eraImported = await admin(env, 'era', 'import', '--agency', 'acme', era, '--json');
  t.equal(eraImported.code, 0, eraImported.stderr);
  t.match(json(t, eraImported), {
    outcome: 'imported',
    agency_id: 'acme',
    era_file_id: /^eraf_/,
    file_name: 'medicare-home-health-crlf.835',
    payments: 1,
    claims: 5,
    provider_adjustments: 2,
  });
  t.equal(eraImported.stderr, '', 'no progress bar with --json (nor off a terminal)');
  const eraAgain = await admin(env, 'era', 'import', '--agency', 'acme', era);
  t.equal(eraAgain.code, 0, 'the same file again is no error');
  t.match(
    eraAgain.stdout,
    /^medicare-home-health-crlf\.835 was already imported \(era_file_id eraf_\S+\): nothing was added\./,
  );
  const eraRefused = await admin(
    env,
    'era',
    'import',
    '--agency',
    'acme',
    join(import.meta.dirname, 'cli.test.ts'),
    '--json',
  );
  t.equal(eraRefused.code, 1);
  t.match(
    json(t, eraRefused).error.message,
    /^cli\.test\.ts was not imported \(nothing was written\): segment 1 .*bad ISA: an X12 file begins with the ISA segment/,
  );
}

// Engine-independent and embedded-store checks run once, in the PGlite run of the suite.
const embeddedRun = { skip: process.env.TEST_DATABASE_URL ? 'covered by the PGlite run' : false };

t.test('on the embedded database (PGlite data directory)', embeddedRun, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'admin-cli-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  await exercise(t, { DATA_DIR: dir });
  const rotated = await admin({ DATA_DIR: dir }, 'keys', 'rotate', '--json');
  t.match(json(t, rotated), { kid: /^[A-Za-z0-9_-]{43}$/ }, 'stdout stays one JSON object');
  t.match(
    rotated.stderr,
    /^note: Created the key-encryption key file .*\.secrets-key \(mode 600\)/,
    'the key file beside the data directory, said on stderr',
  );
  t.equal(statSync(`${dir}.secrets-key`).mode & 0o777, 0o600);
  t.teardown(() => rmSync(`${dir}.secrets-key`, { force: true }));
});

t.test('a data directory held by another process: its message, exit 1, no stack trace', embeddedRun, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'admin-cli-lock-'));
  const lock = acquireDataDirLock(dir);
  t.teardown(() => {
    lock.release();
    rmSync(dir, { recursive: true, force: true });
  });
  const asJson = await admin({ DATA_DIR: dir }, 'agency', 'list', '--json');
  t.equal(asJson.code, 1);
  t.match(
    json(t, asJson).error.message,
    new RegExp(`^The embedded database at .* is in use by process ${process.pid} `),
  );
  const asText = await admin({ DATA_DIR: dir }, 'agency', 'list');
  t.equal(asText.code, 1);
  t.equal(asText.stdout, '');
  t.match(asText.stderr, /^error: The embedded database at .* is in use by process \d+/);
  t.notMatch(asText.stderr, /\n\s+at /, 'no stack trace');
});

/** `npm start` in a child process on `env`'s store (it holds the data directory's lock), ready once it says so. */
async function startServer(t: Test, env: Record<string, string>) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: join(import.meta.dirname, '../..'),
    env: {
      ...process.env,
      DATABASE_URL: '',
      SECRETS_KEY_FILE: '',
      SECRETS_KEY_PREVIOUS: '',
      PORT: String(port),
      TOKEN_ISSUER: base,
      LOG_LEVEL: 'info',
      SHED_EVENT_LOOP_DELAY_MS: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  t.teardown(() => void child.kill('SIGKILL'));
  for (const deadline = Date.now() + 240_000; !output.includes('Extension API ready'); await sleep(100)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the server did not start:\n${output}`);
  }
  return {
    base,
    output: () => output,
    stop: (signal: NodeJS.Signals = 'SIGTERM') => {
      child.kill(signal);
      return exited;
    },
  };
}

/** Waits for `check` to hold, up to a minute. */
async function eventually(check: () => Promise<boolean>): Promise<boolean> {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(200)) if (await check()) return true;
  return false;
}

t.test(
  'while the server holds the embedded database: the same commands, run by the server through its admin socket',
  embeddedRun,
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'admin-cli-served-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const env = { DATA_DIR: dir, SECRETS_KEY: randomBytes(32).toString('base64') };
    const server = await startServer(t, env);
    const agency = await admin(
      env,
      'agency',
      'create',
      '--id',
      'acme',
      '--name',
      'Acme Home Health',
      '--service-zips',
      '02110',
      '--json',
    );
    t.equal(agency.code, 0, agency.stdout);
    const socket = statSync(join(dir, 'extension-api.sock'));
    t.ok(socket.isSocket(), 'a socket beside the lock file');
    t.equal(socket.mode & 0o777, 0o600, 'owner-only');
    const peer = connect(join(dir, 'extension-api.sock'));
    peer.write('{"argv": "agency list"}\n');
    let answer = '';
    for await (const chunk of peer) answer += chunk;
    t.same(
      JSON.parse(answer),
      { error: 'not an admin request: { "argv": [strings], "files": [strings] }' },
      'anything else is refused',
    );
    const integration = json(
      t,
      await admin(env, 'integration', 'create', '--agency', 'acme', '--name', 'Intake bot', '--json'),
    );
    t.match(integration, { client_id: /^cli_/, client_secret: /^sk_/, agency_id: 'acme' });
    t.match(json(t, await admin(env, 'integration', 'list', '--agency', 'acme', '--json')).integrations, [
      { client_ids: [integration.client_id], status: 'active' },
    ]);
    const keys = await admin(
      env,
      'integration',
      'keys',
      '--client-id',
      integration.client_id,
      '--jwks-file',
      jwksFile(dir, jwksOf(clientKey('ES384', 'served-key'))),
      '--json',
    );
    t.match(
      json(t, keys),
      { client_id: integration.client_id, keys: { kids: ['served-key'], jwks_url: null } },
      'the JWKS file read by the CLI and sent through the socket',
    );
    const subscribed = json(
      t,
      await admin(
        env,
        'webhook',
        'subscribe',
        '--agency',
        'acme',
        '--url',
        'http://127.0.0.1:1/in',
        '--events',
        'referral.declined',
        '--allow-http-loopback',
        '--json',
      ),
    );
    t.match(subscribed, { subscription_id: /./, baa_signed: false });
    const baa = await admin(env, 'webhook', 'baa', '--id', subscribed.subscription_id, '--signed', '--json');
    t.equal(baa.code, 0, baa.stderr);
    t.match(json(t, baa), { subscription: { id: subscribed.subscription_id, baa_signed_at: /^\d{4}-/ } });
    const era = join(import.meta.dirname, '../fixtures/era/medicare-home-health-crlf.835');
    t.match(
      json(t, await admin(env, 'era', 'import', '--agency', 'acme', era, '--json')),
      { outcome: 'imported', file_name: 'medicare-home-health-crlf.835', claims: 5 },
      'the file read by the CLI, its name kept',
    );
    const missing = await admin(env, 'era', 'import', '--agency', 'acme', join(dir, 'no-such.835'));
    t.match(missing, { code: 1, stdout: '', stderr: /^error: cannot read .*no-such\.835: ENOENT\n$/ });
    const refused = await admin(env, 'integration', 'disable', '--client-id', 'cli_nope');
    t.equal(refused.code, 1);

    // The case the socket is for: an assistant's proposal, decided while the server runs, then executed by it.
    const manager = json(
      t,
      await admin(
        env,
        'user',
        'create',
        '--agency',
        'acme',
        '--email',
        'mia@acme.example',
        '--name',
        'Mia',
        '--role',
        'manager',
        '--json',
      ),
    );
    const staff = json(
      t,
      await admin(
        env,
        'user',
        'create',
        '--agency',
        'acme',
        '--email',
        'sam@acme.example',
        '--name',
        'Sam',
        '--role',
        'staff',
        '--json',
      ),
    );
    const redirectUri = 'http://127.0.0.1:1/callback';
    const mcpClient = json(
      t,
      await admin(env, 'mcp-client', 'create', '--name', 'Assistant', '--redirect-uri', redirectUri, '--json'),
    );
    const { client } = await connectedClient(server.base, mcpClient.client_id, redirectUri, {
      email: staff.email,
      password: staff.initial_password,
      newPassword: 'Sam chose this one',
    });
    t.teardown(() => client.close());
    const task = { title: 'Call the referral source', description: 'About the missing orders.', priority: 'normal' };
    const proposed = await client.callTool({
      name: 'braes.proposals.create',
      arguments: {
        idempotencyKey: 'cli-socket-0001',
        summary: 'A follow-up task.',
        action: { operation: 'create_task', task },
      },
    });
    const { approvalId } = (proposed as CallToolResult).structuredContent as { approvalId: string };
    t.match(
      json(t, await admin(env, 'proposal', 'list', '--agency', 'acme', '--status', 'pending', '--json')).proposals,
      [{ id: approvalId, status: 'pending' }],
    );
    const approved = await admin(env, 'proposal', 'approve', '--id', approvalId, '--user', manager.email, '--json');
    t.equal(approved.code, 0, approved.stderr);
    t.match(json(t, approved), { id: approvalId, status: 'approved' });
    t.ok(
      await eventually(async () =>
        (await admin(env, 'proposal', 'list', '--agency', 'acme', '--status', 'executed', '--json')).stdout.includes(
          approvalId,
        ),
      ),
      'the server executed it',
    );

    const listed = await admin(env, 'integration', 'list', '--agency', 'acme', '--json');
    const listedText = await admin(env, 'integration', 'list', '--agency', 'acme');
    t.equal(await server.stop(), 0, 'the server stops cleanly');
    t.notOk(existsSync(join(dir, 'extension-api.sock')), 'and removes its socket');
    t.equal(
      (await admin(env, 'integration', 'list', '--agency', 'acme', '--json')).stdout,
      listed.stdout,
      'direct access again: the same JSON',
    );
    t.equal((await admin(env, 'integration', 'list', '--agency', 'acme')).stdout, listedText.stdout, 'the same text');
    t.same(
      await admin(env, 'integration', 'disable', '--client-id', 'cli_nope'),
      refused,
      'the same refusal, in the same words',
    );

    // A crashed server leaves its lock and its socket: the CLI opens the store itself, and the next server replaces both.
    await (await startServer(t, env)).stop('SIGKILL');
    t.ok(statSync(join(dir, 'extension-api.sock')).isSocket(), "the crashed server's socket is left");
    t.equal(
      (await admin(env, 'integration', 'list', '--agency', 'acme')).stdout,
      listedText.stdout,
      'no server answers it: direct access',
    );
    const next = await startServer(t, env);
    t.equal(
      (await admin(env, 'integration', 'list', '--agency', 'acme')).stdout,
      listedText.stdout,
      'the next server answers on a socket of its own',
    );
    t.equal(await next.stop(), 0);
  },
);

t.test('usage errors exit 1 with the error as the one JSON object', embeddedRun, async (t) => {
  const unknown = await admin({ DATA_DIR: '/nonexistent' }, 'agency', 'frobnicate', '--json');
  t.equal(unknown.code, 1);
  t.match(json(t, unknown).error.message, /^unknown command "agency frobnicate"/);
  const badOption = await admin({ DATA_DIR: '/nonexistent' }, 'agency', 'list', '--colour', '--json');
  t.equal(badOption.code, 1);
  t.match(json(t, badOption).error.message, /Unknown option '--colour'/);
});

const adminUrl = process.env.TEST_DATABASE_URL;
t.test('on PostgreSQL (DATABASE_URL)', { skip: adminUrl ? false : 'TEST_DATABASE_URL is not set' }, async (t) => {
  const name = `admin_cli_${randomBytes(4).toString('hex')}`;
  const query = async (text: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    await client.query(text).finally(() => client.end());
  };
  await query(`CREATE DATABASE "${name}"`);
  t.teardown(() => query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  const url = new URL(adminUrl!);
  url.pathname = `/${name}`;
  await exercise(t, { DATABASE_URL: url.toString() });

  const refused = await admin({ DATABASE_URL: url.toString() }, 'keys', 'rotate', '--json');
  t.equal(refused.code, 1, 'commands that seal or open secrets need the key-encryption key');
  t.match(json(t, refused).error.message, /^DATABASE_URL is set but neither SECRETS_KEY nor SECRETS_KEY_FILE is/);
  const withKey = { DATABASE_URL: url.toString(), SECRETS_KEY: randomBytes(32).toString('base64') };
  t.match(json(t, await admin(withKey, 'keys', 'rotate', '--json')), { kid: /^[A-Za-z0-9_-]{43}$/, retired: [] });
  t.match(json(t, await admin(withKey, 'secrets', 'rewrap', '--json')), {
    secrets: 1,
    rewrapped: 0,
    sealed_from_plaintext: 0,
  });
});
