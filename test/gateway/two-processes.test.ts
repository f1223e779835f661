import t from 'tap';
import type { ChildProcess } from 'node:child_process';
import { testDatabase, testDatabaseUrl } from '../helpers/database.js';
import { createTestIntegration, tokenRequestBody, type TestIntegration } from '../helpers/identity.js';
import { startServerProcess } from '../helpers/server-process.js';

const skip = process.env.TEST_DATABASE_URL ? false : 'needs real PostgreSQL shared by two server processes';

function stopped(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) =>
    child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code)),
  );
}

async function accessToken(url: string, integration: TestIntegration): Promise<string> {
  const tokenResponse = await fetch(`${url}/api/v1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(tokenRequestBody(integration, 'phi')),
  });
  return ((await tokenResponse.json()) as { access_token: string }).access_token;
}

t.test('two server processes on one database run a command exactly once', { skip, timeout: 120_000 }, async (t) => {
  const { db } = await testDatabase();
  const first = await startServerProcess(testDatabaseUrl()!);
  t.teardown(() => void first.child.kill());
  const second = await startServerProcess(testDatabaseUrl()!);
  t.teardown(() => void second.child.kill());

  const integration = await createTestIntegration(db);
  const token = await accessToken(first.url, integration);
  const headers = {
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    'idempotency-key': 'two-process-key-1',
  };
  const responses = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      fetch(`${(i % 2 ? first : second).url}/api/v1/ext/tasks`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ title: 'Exactly once' }),
      }),
    ),
  );
  const bodies = await Promise.all(responses.map((r) => r.text()));
  t.same([...new Set(responses.map((r) => r.status))], [200]);
  t.equal(new Set(bodies).size, 1, 'both processes answer with the same stored bytes');
  t.equal(responses.filter((r) => r.headers.get('idempotent-replayed') !== 'true').length, 1);
  const tasks = await db.selectFrom('tasks').select('id').where('agency_id', '=', integration.agencyId).execute();
  t.equal(tasks.length, 1);
});

t.test(
  'two server processes stopped with SIGTERM hand back their unspent leases: the day counter is the calls they admitted',
  { skip, timeout: 120_000 },
  async (t) => {
    const { db } = await testDatabase();
    const servers = await Promise.all([startServerProcess(testDatabaseUrl()!), startServerProcess(testDatabaseUrl()!)]);
    for (const { child } of servers) t.teardown(() => void child.kill('SIGKILL'));
    const integration = await createTestIntegration(db);
    const token = await accessToken(servers[0].url, integration);
    const callsTo = [30, 17];
    const statuses = await Promise.all(
      servers.flatMap(({ url }, i) =>
        Array.from({ length: callsTo[i] }, () =>
          fetch(`${url}/api/v1/ext/health`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status),
        ),
      ),
    );
    t.same(new Set(statuses), new Set([200]));
    for (const { child } of servers) child.kill('SIGTERM');
    t.same(await Promise.all(servers.map(({ child }) => stopped(child))), [0, 0], 'both shut down gracefully');
    const days = await db
      .selectFrom('usage_windows')
      .select('used')
      .where('agency_id', '=', integration.agencyId)
      .where('extension_id', '=', integration.extensionId)
      .where('kind', '=', 'day')
      .execute();
    t.same(days, [{ used: 30 + 17 }]);
  },
);
