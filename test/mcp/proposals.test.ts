import { t, type Test } from 'tap';
import { sql } from 'kysely';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createAgency } from '../../src/admin/agency.js';
import { createUser } from '../../src/admin/user.js';
import { createMcpClient } from '../../src/admin/mcp-client.js';
import { decideAs } from '../../src/admin/proposal.js';
import { webhookCommands } from '../../src/admin/webhook.js';
import { loadConfig } from '../../src/config.js';
import { webhookOutbox as outbox } from '../../src/events/outbox.js';
import { verifyDelivery } from '../../src/events/verify-delivery.js';
import { webhookEvents } from '../../src/generated/contract.js';
import { executeApproved, executeProposal } from '../../src/proposals/execution.js';
import { takeApproved } from '../../src/proposals/proposals.js';
import { lockTable, testDatabase } from '../helpers/database.js';
import { testKeyEncryption } from '../helpers/secrets.js';
import { startReceiver, startWebhookWorker } from '../helpers/webhook-receiver.js';
import { connectedClient, listeningApp, refusalOf, withOwnPassword } from './mcp-helpers.js';

const db = (await testDatabase()).db;
// No executor in the background: the test runs each step itself.
const { api, base } = await listeningApp(t, undefined, { inProcessWorkers: [] });
const redirectUri = 'http://127.0.0.1:1/callback';
await createAgency(db, { id: 'mcp-proposals', name: 'Proposals agency', serviceZips: ['02108'] });
const staff = await createUser(db, {
  agencyId: 'mcp-proposals',
  email: 'staff@proposals.example',
  name: 'Sam Staff',
  role: 'staff',
});
const manager = await createUser(db, {
  agencyId: 'mcp-proposals',
  email: 'manager@proposals.example',
  name: 'Mia Manager',
  role: 'manager',
});
const mcpClient = await createMcpClient(db, 'Proposing assistant', [redirectUri]);
const { client } = await connectedClient(base, mcpClient.clientId, redirectUri, await withOwnPassword(db, staff));

// The agency's webhook subscriber for decisions, and the delivery worker (the proposal executor stays off).
const receiver = await startReceiver(t);
const subscribed = await webhookCommands.subscribe.run({
  db,
  config: loadConfig({}),
  options: {
    agency: 'mcp-proposals',
    url: receiver.url,
    events: 'approval.decided',
    'allow-http-loopback': true,
    'phi-mode': 'no_phi',
  },
  keyEncryption: () => testKeyEncryption,
});
startWebhookWorker(t, db);
/** The n-th approval.decided delivered, its signature verified and its body checked against the contract. */
async function delivered(t: Test, n: number) {
  const delivery = (await receiver.waitFor(n))[n - 1];
  const envelope = verifyDelivery(delivery.rawBody, delivery.headers, subscribed.json.signing_secret as string);
  const { validate } = webhookEvents['approval.decided'];
  t.ok(validate(envelope), `matches ApprovalDecidedEvent ${JSON.stringify(validate.errors)}`);
  return envelope;
}

const structured = (result: unknown) => (result as CallToolResult).structuredContent as Record<string, unknown>;
const status = async (approvalId: unknown) =>
  structured(await client.callTool({ name: 'braes.proposals.status', arguments: { approvalId } }));
const taskBody = (title: string) => ({
  title,
  description: 'Please add the missing signature date column.',
  priority: 'normal',
});
const propose = (
  idempotencyKey: string,
  title: string,
  summary = 'Ask the owner of the unsigned-orders collection for a column.',
) =>
  client.callTool({
    name: 'braes.proposals.create',
    arguments: { idempotencyKey, summary, action: { operation: 'create_task', task: taskBody(title) } },
  });
const tasksTitled = async (title: string) =>
  (
    await db
      .selectFrom('tasks')
      .select('id')
      .where('agency_id', '=', 'mcp-proposals')
      .where('title', '=', title)
      .execute()
  ).length;

t.test(
  'create: replayed with the same key, a conflict with another body, a refusal for a bad task or key',
  async (t) => {
    const created = structured(await propose('proposal-key-0001', 'Add a column'));
    t.match(created, {
      status: 'pending',
      decided: false,
      executedAt: null,
      lastExecutionError: null,
      replayed: false,
      approvalId: /^apr_/,
    });
    t.match(created.next, /Waiting for a person/);
    const replay = structured(await propose('proposal-key-0001', 'Add a column'));
    t.equal(replay.approvalId, created.approvalId, 'the same proposal');
    t.equal(replay.replayed, true);
    const conflict = await propose('proposal-key-0001', 'Something else');
    t.ok(conflict.isError);
    t.equal(refusalOf(conflict as CallToolResult).code, 'PLATFORM_IDEMPOTENCY_CONFLICT');
    const badTask = await client.callTool({
      name: 'braes.proposals.create',
      arguments: {
        idempotencyKey: 'proposal-key-0002',
        summary: 'x',
        action: { operation: 'create_task', task: { priority: 'normal' } },
      },
    });
    t.equal(
      refusalOf(badTask as CallToolResult).code,
      'PLATFORM_INVALID_INPUT',
      'a task without a title is refused at once',
    );
    for (const idempotencyKey of ['short', 'k'.repeat(201)]) {
      const bad = await client.callTool({
        name: 'braes.proposals.create',
        arguments: { idempotencyKey, summary: 'x', action: { operation: 'create_task', task: taskBody('x') } },
      });
      t.ok(bad.isError, `key of ${idempotencyKey.length} characters`);
    }
    const tools = (await client.listTools()).tools.map((tool) => tool.name);
    t.ok(tools.includes('braes.proposals.create') && tools.includes('braes.proposals.status'));
    t.notOk(
      tools.some((name) => /approve|reject|decide/.test(name)),
      'no decision tool',
    );
  },
);

t.test(
  'approve: approval.decided delivered and verified, then execution once even when the executor stopped mid-way',
  async (t) => {
    const { approvalId } = structured(await propose('proposal-key-0100', 'Run once'));
    await t.rejects(
      decideAs(db, outbox, staff.email, String(approvalId), 'approved'),
      /only administrator and manager users decide/,
    );
    await t.rejects(
      decideAs(db, undefined, manager.email, String(approvalId), 'approved'),
      /No event outbox is configured/,
      'no outbox: refused, not silent',
    );
    t.match(await status(approvalId), { status: 'pending', decided: false }, 'and nothing changed');

    await decideAs(db, outbox, manager.email, String(approvalId), 'approved', 'fine');
    t.match(await delivered(t, 1), {
      type: 'approval.decided',
      data: { approval_id: approvalId, decision: 'approved', proposed_operation: 'createTask' },
    });
    t.match(await status(approvalId), {
      status: 'approved',
      decided: true,
      decision: 'approved',
      executedAt: null,
      next: /approval does not mean it ran/,
    });
    await t.rejects(decideAs(db, outbox, manager.email, String(approvalId), 'rejected'), /already approved/);

    // An executor takes it, runs the operation, and stops before recording the outcome.
    const [taken] = await takeApproved(db, 10);
    t.equal(taken.id, approvalId);
    t.equal((await executeProposal(api.app.gateway, taken)).kind, 'executed');
    t.equal(await tasksTitled('Run once'), 1, 'the task exists');
    t.match(await status(approvalId), { status: 'approved', executedAt: null }, 'not recorded yet');
    t.equal(await executeApproved(db, api.app.gateway), 0, 'held by the stopped executor until its lease ends');

    await db
      .updateTable('proposals')
      .set({ execution_lease_until: sql`now() - interval '1 second'` })
      .where('id', '=', String(approvalId))
      .execute();
    t.equal(await executeApproved(db, api.app.gateway), 1, 'the restarted executor takes it again');
    t.equal(await tasksTitled('Run once'), 1, 'the operation replayed its first answer: still one task');
    const done = await status(approvalId);
    t.match(done, {
      status: 'executed',
      decided: true,
      lastExecutionError: null,
      executedAt: String,
      result: { taskId: String },
    });
    t.equal(await executeApproved(db, api.app.gateway), 0, 'nothing left to run');
  },
);

t.test('reject: nothing runs; a failing action shows its error', async (t) => {
  const { approvalId: rejected } = structured(await propose('proposal-key-0200', 'Never runs'));
  await decideAs(db, outbox, manager.email, String(rejected), 'rejected', 'not now');
  t.match(await delivered(t, 2), { type: 'approval.decided', data: { approval_id: rejected, decision: 'rejected' } });
  t.equal(await executeApproved(db, api.app.gateway), 0);
  t.match(await status(rejected), {
    status: 'rejected',
    decided: true,
    decision: 'rejected',
    executedAt: null,
    next: /nothing will run/,
  });
  t.equal(await tasksTitled('Never runs'), 0);

  const failing = structured(
    await client.callTool({
      name: 'braes.proposals.create',
      arguments: {
        idempotencyKey: 'proposal-key-0300',
        summary: 'about a patient',
        action: {
          operation: 'create_task',
          task: { title: 'For a patient', related_resource: { type: 'patient', id: 'PT-unknown' } },
        },
      },
    }),
  );
  await decideAs(db, outbox, manager.email, String(failing.approvalId), 'approved');
  t.equal(await executeApproved(db, api.app.gateway), 1);
  const failed = await status(failing.approvalId);
  t.match(failed, {
    status: 'failed',
    executedAt: null,
    lastExecutionError: /^4\d\d PLATFORM_/,
    next: /will not be retried/,
  });
});

t.test("another user's proposal answers like an unknown one; the REST partition has no /proposals route", async (t) => {
  const { approvalId } = structured(await propose('proposal-key-0400', 'Mine'));
  const other = await connectedClient(base, mcpClient.clientId, redirectUri, await withOwnPassword(db, manager));
  const foreign = await other.client.callTool({ name: 'braes.proposals.status', arguments: { approvalId } });
  t.equal(refusalOf(foreign as CallToolResult).code, 'PLATFORM_APPROVAL_NOT_FOUND');
  const rest = await api.app.inject({ method: 'GET', url: '/api/v1/ext/proposals' });
  t.equal(rest.statusCode, 404);
});

t.test(
  "a passing refusal is retried, after a wait, as the contract's error table says",
  { skip: process.env.TEST_DATABASE_URL ? false : 'needs a second PostgreSQL connection to hold a lock' },
  async (t) => {
    const { approvalId } = structured(await propose('proposal-key-0500', 'Retried'));
    await decideAs(db, outbox, manager.email, String(approvalId), 'approved');
    const release = await lockTable(t, 'tasks');
    t.equal(await executeApproved(db, api.app.gateway), 1);
    await release();
    // A lock wait answers 409 PLATFORM_CONCURRENT_MODIFICATION (or 504 PLATFORM_TIMEOUT): both retryable in the table.
    t.match(await status(approvalId), {
      status: 'approved',
      executedAt: null,
      lastExecutionError: /^(409|504) PLATFORM_(CONCURRENT_MODIFICATION|TIMEOUT)/,
      next: /retried/,
    });
    t.equal(await executeApproved(db, api.app.gateway), 0, 'not again before its wait');
    await db
      .updateTable('proposals')
      .set({ execution_lease_until: sql`now() - interval '1 second'` })
      .where('id', '=', String(approvalId))
      .execute();
    t.equal(await executeApproved(db, api.app.gateway), 1);
    t.match(await status(approvalId), { status: 'executed', lastExecutionError: null });
    t.equal(await tasksTitled('Retried'), 1);
  },
);

t.test(
  'a decision leaves an audit record naming the deciding person and the proposal; a refused one leaves none',
  async (t) => {
    const { approvalId } = structured(await propose('proposal-key-0600', 'Audited'));
    const decisions = async () =>
      (
        await db
          .selectFrom('audit_events')
          .selectAll()
          .where('agency_id', '=', 'mcp-proposals')
          .where('operation_id', '=', 'decideProposal')
          .execute()
      ).filter((row) => row.resource_ids.includes(String(approvalId)));
    await decideAs(db, outbox, manager.email, String(approvalId), 'rejected', 'not now');
    const audit = await decisions();
    t.equal(audit.length, 1);
    t.match(audit[0], {
      extension_id: 'platform',
      resource_type: 'proposal',
      resource_ids: [approvalId],
      outcome: 'success',
      phi_mode: 'no_phi',
      details: { actor: `user:${manager.userId}` },
    });
    await t.rejects(decideAs(db, outbox, manager.email, String(approvalId), 'approved'), /already rejected/);
    t.equal((await decisions()).length, 1);
  },
);
