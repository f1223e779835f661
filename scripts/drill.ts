/**
 * Operational drills (not tests: they take minutes and start their own clusters).
 *   npm run -s drill -- failover [--json] [--switchover]
 * failover: a primary with a synchronous standby under pg_auto_failover (scripts/postgres-ha.sh), three server
 * processes and a webhooks worker; clients of clients/typescript write referrals and tasks (each with its idempotency
 * key, retried on 503 or a dropped connection) while the primary's node is killed as a machine dies (its PostgreSQL
 * and its keeper, SIGKILL at once), or, with --switchover, while the standby is promoted as planned. Prints what was
 * acknowledged, lost, duplicated, delivered, and how long the service refused work.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { createExtensionClient, type ExtensionClient } from '../clients/typescript/src/index.js';
import { createAgency } from '../src/admin/agency.js';
import { createIntegration } from '../src/admin/integration.js';
import { webhookCommands } from '../src/admin/webhook.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { CONTRACT_CAPABILITIES, PHI_MODES } from '../src/identity/grants.js';
import { loadKeyEncryption } from '../src/identity/key-encryption-keys.js';
import { root } from './bench-processes.js';

const [drill, ...rest] = process.argv.slice(2);
if (drill !== 'failover') {
  console.error('usage: npm run -s drill -- failover [--json] [--switchover]');
  process.exit(2);
}
const { values: flags } = parseArgs({
  args: rest,
  options: { json: { type: 'boolean', default: false }, switchover: { type: 'boolean', default: false } },
});

const WRITERS = 3;
/** Each writer's pause between writes: at most 15 writes a second in all (7 or so with the answers' time), a modest load. */
const WRITE_PAUSE_MS = 200;
const BEFORE_CRASH_MS = 8_000;
const AFTER_TAKEOVER_MS = 10_000;

const say = (message: string) => console.error(`drill: ${message}`);
const seconds = (ms: number) => Number((ms / 1000).toFixed(1));

interface NodeState {
  nodename: string;
  nodeport: number;
  current_group_state: string;
  assigned_group_state: string;
}

function autoctl(ha: string, ...args: string[]): string {
  return execFileSync(join(ha, 'autoctl'), args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function nodeStates(ha: string): NodeState[] {
  return JSON.parse(autoctl(ha, 'show', 'state', '--pgdata', join(ha, 'monitor'), '--json')) as NodeState[];
}

const isPrimary = (node: NodeState) =>
  ['primary', 'wait_primary', 'single'].includes(node.current_group_state) &&
  node.current_group_state === node.assigned_group_state;

/** A machine's death: the node's keeper group and its PostgreSQL with every backend (they run in their own sessions), all SIGKILLed at once. */
function killNode(ha: string, name: string): void {
  const postmaster = Number(readFileSync(join(ha, name, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const backends = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]) === postmaster;
      } catch {
        return false;
      }
    })
    .map(Number);
  const group = Number(readFileSync(join(ha, `${name}.pgid`), 'utf8'));
  for (const kill of [
    () => process.kill(-group, 'SIGKILL'),
    () => process.kill(postmaster, 'SIGKILL'),
    ...backends.map((pid) => () => process.kill(pid, 'SIGKILL')),
  ]) {
    try {
      kill();
    } catch {
      // Already gone with its group.
    }
  }
}

const SUBSCRIBED = ['task.created', 'referral.created'];

/** What a loopback receiver saw on one subscription (its path). */
interface Received {
  /** Deliveries by event id: more than one is a redelivery, which the receiver deduplicates. */
  deliveries: Map<string, number>;
  /** Events processed (once per event id) by what they announce: more than one is one change announced twice. */
  processed: Map<string, number>;
}

function receiver(): Promise<{ server: Server; url: string; received: Map<string, Received> }> {
  const received = new Map<string, Received>();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk));
    req.on('end', () => {
      const { id, type, data } = JSON.parse(body) as { id: string; type: string; data: { id?: string } };
      const seen = received.get(req.url!) ?? { deliveries: new Map(), processed: new Map() };
      received.set(req.url!, seen);
      const first = !seen.deliveries.has(id);
      seen.deliveries.set(id, (seen.deliveries.get(id) ?? 0) + 1);
      const subject = `${type} ${data.id ?? JSON.stringify(data)}`;
      if (first) seen.processed.set(subject, (seen.processed.get(subject) ?? 0) + 1);
      res.writeHead(204).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received }),
    ),
  );
}

function startProcess(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** A port nothing listens on now (a random one may be another program's, whose answers would never be ours). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createNetServer();
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
    probe.on('error', reject);
  });
}

async function listening(url: string, child: ChildProcess): Promise<void> {
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; await sleep(200)) {
    if (child.exitCode !== null) throw new Error(`the server for ${url} exited with ${child.exitCode}`);
    if (
      await fetch(`${url}/livez`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
  }
  throw new Error(`${url} did not start`);
}

/** The drill's own reads after the failover: its pool's first connection may still try the dead primary once. */
async function untilAnswered<T>(read: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await read();
    } catch (err) {
      if (attempt === 20) throw err;
      await sleep(500);
    }
  }
}

interface Acknowledged {
  kind: 'referral' | 'task';
  key: string;
  marker: string;
}

async function failoverDrill(ha: string, databaseUrl: string): Promise<void> {
  const secretsKey = randomBytes(32).toString('base64');
  const issuer = 'http://extension-api.drill';
  const env = {
    DATABASE_URL: databaseUrl,
    SECRETS_KEY: secretsKey,
    TOKEN_ISSUER: issuer,
    LOG_LEVEL: 'error',
    SHED_EVENT_LOOP_DELAY_MS: '0',
    DEMO: '',
  };
  const database = await openDatabase({ databaseUrl });
  const { db } = database;
  const hook = await receiver();
  const agencyId = `drill-${randomBytes(3).toString('hex')}`;
  await createAgency(db, { id: agencyId, name: 'Failover drill', serviceZips: ['02108'] });
  const integration = await createIntegration(db, {
    agencyId,
    name: 'Drill',
    capabilities: [...CONTRACT_CAPABILITIES],
    phiModes: [...PHI_MODES],
  });
  const config = loadConfig({ ...process.env, ...env });
  const keys = loadKeyEncryption(config.secretsKey, () => {});
  for (const path of ['/a', '/b']) {
    await webhookCommands.subscribe.run({
      db,
      config,
      keyEncryption: () => keys,
      options: {
        agency: agencyId,
        url: `${hook.url}${path}`,
        events: SUBSCRIBED.join(','),
        'allow-http-loopback': true,
        'baa-signed': true,
        'phi-mode': 'phi',
      },
    });
  }

  const ports = [await freePort(), await freePort(), await freePort()];
  // The webhooks worker runs as its own process; the servers run the other workers (housekeeping, proposals).
  const servers = ports.map((port) =>
    startProcess(['src/server.ts'], { ...env, PORT: String(port), IN_PROCESS_WORKERS: 'housekeeping,proposals' }),
  );
  const worker = startProcess(['scripts/worker.ts', 'webhooks'], env);
  const children = [...servers, worker];
  const crashed: string[] = [];
  const watch = (child: ChildProcess) =>
    child.on('exit', (code) => code !== null && code !== 0 && crashed.push(`pid ${child.pid} exited with ${code}`));
  children.forEach(watch);
  try {
    const urls = ports.map((port) => `http://127.0.0.1:${port}`);
    await Promise.all(urls.map((url, i) => listening(url, servers[i])));
    say(`3 servers and a webhooks worker on ${databaseUrl}`);

    const refusals: number[] = [];
    const clients: ExtensionClient[] = urls.map((baseUrl) =>
      createExtensionClient({
        baseUrl,
        credentials: { clientId: integration.clientId, clientSecret: integration.clientSecret, phiMode: 'phi' },
        retry: { maxAttempts: 200, maxDelaySeconds: 30, baseDelaySeconds: 0.25 },
        async fetch(request) {
          try {
            const response = await fetch(request);
            if (response.status === 503) refusals.push(Date.now());
            return response;
          } catch (err) {
            refusals.push(Date.now());
            throw err;
          }
        },
      }),
    );
    const acknowledged: Acknowledged[] = [];
    const failed: string[] = [];
    let writing = true;
    let sequence = 0;
    const writer = async (n: number) => {
      while (writing) {
        const i = sequence++;
        const client = clients[(n + i) % clients.length];
        const key = `drill-${agencyId}-${i}`;
        const marker = `Drill ${i} ${randomBytes(3).toString('hex')}`;
        const headers = { 'idempotency-key': key };
        const kind = i % 2 === 0 ? 'referral' : 'task';
        try {
          const answer =
            kind === 'referral'
              ? await client.POST('/api/v1/ext/referrals', {
                  body: { service_line: 'home_health', patient_name: marker, patient_zip_code: '02108' },
                  headers,
                })
              : await client.POST('/api/v1/ext/tasks', { body: { title: marker }, headers });
          if (answer.response.ok) acknowledged.push({ kind, key, marker });
          else failed.push(`${kind} ${key}: ${answer.response.status}`);
        } catch (err) {
          failed.push(`${kind} ${key}: ${(err as Error).message}`);
        }
        await sleep(WRITE_PAUSE_MS);
      }
    };
    const writers = Array.from({ length: WRITERS }, (_, n) => writer(n));

    await sleep(BEFORE_CRASH_MS);
    const before = nodeStates(ha);
    const primary = before.find(isPrimary);
    const standby = before.find((node) => node !== primary);
    if (!primary || !standby) throw new Error(`no primary and standby: ${JSON.stringify(before)}`);
    const eventAt = Date.now();
    if (flags.switchover) {
      say(`switchover: promoting ${standby.nodename}`);
      autoctl(ha, 'perform', 'switchover', '--pgdata', join(ha, 'monitor'), '--formation', 'default', '--group', '0');
    } else {
      say(`killing ${primary.nodename} (its PostgreSQL and keeper, SIGKILL)`);
      killNode(ha, primary.nodename);
    }
    let tookOverAt: number | undefined;
    for (const deadline = Date.now() + 180_000; !tookOverAt && Date.now() < deadline; await sleep(250)) {
      const promoted = nodeStates(ha).find((node) => node.nodename === standby.nodename);
      if (promoted && isPrimary(promoted)) tookOverAt = Date.now();
    }
    if (!tookOverAt) throw new Error('the standby did not take over within 3 minutes');
    say(`${standby.nodename} took over after ${seconds(tookOverAt - eventAt)} s`);
    await sleep(AFTER_TAKEOVER_MS);
    writing = false;
    await Promise.all(writers);

    const tasks = await untilAnswered(() =>
      db.selectFrom('tasks').select(['title']).where('agency_id', '=', agencyId).execute(),
    );
    const referrals = await untilAnswered(() =>
      db.selectFrom('referrals').select(['patient_display_name as title']).where('agency_id', '=', agencyId).execute(),
    );
    const stored = new Map<string, number>();
    for (const { title } of [...tasks, ...referrals]) if (title) stored.set(title, (stored.get(title) ?? 0) + 1);
    const events = await untilAnswered(() =>
      db
        .selectFrom('webhook_events')
        .select('id')
        .where('agency_id', '=', agencyId)
        .where('type', 'in', SUBSCRIBED)
        .execute(),
    );
    const emitted = new Set(events.map((e) => e.id));
    const subscriptions = ['/a', '/b'];
    const seen = (path: string) =>
      hook.received.get(path) ?? { deliveries: new Map<string, number>(), processed: new Map<string, number>() };
    const allArrived = () => subscriptions.every((path) => [...emitted].every((id) => seen(path).deliveries.has(id)));
    for (const deadline = Date.now() + 120_000; !allArrived() && Date.now() < deadline; await sleep(500));
    const repeated = (counts: Map<string, number>) => [...counts.values()].reduce((n, count) => n + count - 1, 0);
    const refused = refusals.length > 0 ? refusals : undefined;
    const report = {
      mode: flags.switchover ? 'switchover' : 'failover',
      acknowledged_writes: acknowledged.length,
      lost_writes: acknowledged.filter((write) => !stored.has(write.marker)).length,
      duplicate_commands: [...stored.values()].filter((count) => count > 1).length,
      failed_requests: failed.length,
      events_emitted: emitted.size,
      events_lost: subscriptions.reduce(
        (lost, path) => lost + [...emitted].filter((id) => !seen(path).deliveries.has(id)).length,
        0,
      ),
      events_duplicated_per_subscription: Math.max(...subscriptions.map((path) => repeated(seen(path).processed))),
      deliveries_repeated: subscriptions.reduce((sum, path) => sum + repeated(seen(path).deliveries), 0),
      refusals: refusals.length,
      unavailable_seconds: refused ? seconds(Math.max(...refused) - Math.min(...refused)) : 0,
      failover_seconds: seconds(tookOverAt - eventAt),
      processes_crashed: crashed.length,
    };
    if (failed.length > 0) say(`failed requests: ${failed.slice(0, 5).join('; ')}`);
    if (crashed.length > 0) say(`crashed: ${crashed.join('; ')}`);
    console.log(flags.json ? JSON.stringify(report) : JSON.stringify(report, null, 2));
  } finally {
    for (const child of children) {
      child.removeAllListeners('exit');
      child.kill('SIGKILL');
    }
    hook.server.close();
    await database.close();
  }
}

// The cluster comes first: the drill runs itself again inside scripts/postgres-ha.sh, which hands it DATABASE_URL.
if (!process.env.POSTGRES_HA_DIR) {
  const inner = spawn(
    'bash',
    [join(root, 'scripts', 'postgres-ha.sh'), process.execPath, '--import', 'tsx', ...process.argv.slice(1)],
    { stdio: 'inherit' },
  );
  inner.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
} else {
  await failoverDrill(process.env.POSTGRES_HA_DIR, process.env.DATABASE_URL!);
}
