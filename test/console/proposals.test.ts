import { t } from 'tap';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createMcpClient } from '../../src/admin/mcp-client.js';
import { executeApproved } from '../../src/proposals/execution.js';
import { openHeadlessChromium } from '../helpers/chromium.js';
import {
  accessibilityViolations,
  keyboardWalk,
  formBody,
  httpSession,
  pageText,
  press,
  shot,
  signInAs,
  typeInto,
  inBrowser,
  consoleTestbed,
} from '../helpers/console.js';
import { connectedClient } from '../mcp/mcp-helpers.js';

t.setTimeout(300_000);
const { server, db, agency, other } = await consoleTestbed(t);

const redirectUri = 'http://127.0.0.1:1/callback';
const assistant = await createMcpClient(db, 'Scheduling assistant', [redirectUri]);
const { client } = await connectedClient(server.base, assistant.clientId, redirectUri, agency.staff);

/** A proposal of a task, made by the staff person's assistant through the MCP tool. */
async function propose(key: string, title: string, summary: string): Promise<string> {
  const result = (await client.callTool({
    name: 'braes.proposals.create',
    arguments: {
      idempotencyKey: key,
      summary,
      action: {
        operation: 'create_task',
        task: { title, description: 'Made from the console test.', priority: 'high' },
      },
    },
  })) as CallToolResult;
  if (result.isError) throw new Error(JSON.stringify(result.content));
  return (result.structuredContent as { approvalId: string }).approvalId;
}

const proposal = (id: string) => db.selectFrom('proposals').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const decidedEvents = (approvalId: string) =>
  db
    .selectFrom('webhook_events')
    .select(['type', 'data'])
    .where('agency_id', '=', agency.agencyId)
    .where('type', '=', 'approval.decided')
    .execute()
    .then((rows) => rows.filter((row) => row.data.approval_id === approvalId));

const toApprove = await propose('console-approve-1', 'Call Dr. Rivera about unsigned orders', 'Remind the physician.');
const toReject = await propose('console-reject-01', 'Order pizza for the office', 'Lunch for the team on Friday.');
const forHttp = await propose('console-http-0001', 'Check the fax line', 'The fax line seems down.');

t.test('everyone of the agency reads the queue; staff cannot decide (403, nothing changes)', async (t) => {
  const staff = await httpSession(server, agency.staff);
  const queue = await staff.get('/console/proposals');
  t.equal(queue.statusCode, 200);
  t.match(queue.body, /The fax line seems down\./);
  t.match(queue.body, /Scheduling assistant/, 'the assistant by its name');
  t.match(queue.body, /Staff Person/, 'who proposed, by name');
  const page = await staff.get(`/console/proposals/${forHttp}`);
  t.equal(page.statusCode, 200);
  t.match(page.body, /&#34;title&#34;: &#34;Check the fax line&#34;/, 'the exact body, as JSON');
  t.match(page.body, /POST \/api\/v1\/ext\/tasks/);
  t.notMatch(page.body, /Approve/, 'no decision form for a role that does not decide');
  const refused = await staff.post(
    `/console/proposals/${forHttp}/decision`,
    { decision: 'approved', reason: '' },
    `/console/proposals/${forHttp}`,
  );
  t.equal(refused.statusCode, 403);
  t.equal((await proposal(forHttp)).status, 'pending');
  t.same(await decidedEvents(forHttp), []);
});

t.test('a decision without the form token is 403 and changes nothing', async (t) => {
  const manager = await httpSession(server, agency.manager);
  const res = await server.app.inject({
    method: 'POST',
    url: `/console/proposals/${forHttp}/decision`,
    headers: { cookie: manager.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: formBody({ decision: 'approved' }),
  });
  t.equal(res.statusCode, 403);
  t.equal((await proposal(forHttp)).status, 'pending');
});

t.test('a rejection needs a reason, a decision is approve or reject; a bad status filter is a clear 400', async (t) => {
  const manager = await httpSession(server, agency.manager);
  const res = await manager.post(`/console/proposals/${forHttp}/decision`, { decision: 'rejected', reason: ' ' });
  t.equal(res.statusCode, 400);
  t.match(res.body, /Say why you reject it/);
  t.equal((await proposal(forHttp)).status, 'pending');
  for (const decision of ['constructor', 'pending', '']) {
    const unknown = await manager.post(`/console/proposals/${forHttp}/decision`, { decision, reason: 'Because.' });
    t.equal(unknown.statusCode, 400, `decision ${JSON.stringify(decision)}`);
    t.match(unknown.body, /Choose Approve or Reject/);
  }
  t.equal((await proposal(forHttp)).status, 'pending');
  t.same(await decidedEvents(forHttp), []);
  const filter = await manager.get('/console/proposals?status=lost');
  t.equal(filter.statusCode, 400);
  t.match(filter.body, /There is no proposal status &#34;lost&#34;/);
});

t.test('a person of another agency gets 404 for the proposal and never sees it', async (t) => {
  const outsider = await httpSession(server, other.administrator);
  t.equal((await outsider.get(`/console/proposals/${forHttp}`)).statusCode, 404);
  const decided = await outsider.post(`/console/proposals/${forHttp}/decision`, {
    decision: 'approved',
    reason: 'not mine',
  });
  t.equal(decided.statusCode, 404);
  t.equal((await proposal(forHttp)).status, 'pending');
  for (const status of ['pending', 'any']) {
    const queue = await outsider.get(`/console/proposals?status=${status}`);
    t.equal(queue.statusCode, 200);
    t.notMatch(queue.body, new RegExp(`${forHttp}|fax line`), `not in the ${status} queue`);
  }
});

t.test(
  'in a browser: a manager approves one proposal and sees it executed, rejects another with a reason',
  inBrowser,
  async (t) => {
    const page = await openHeadlessChromium(t);
    await signInAs(page, server.base, agency.manager);
    await page.navigate(`${server.base}/console/proposals`);
    t.match(await pageText(page), /Remind the physician\./);
    t.same(await accessibilityViolations(page), [], 'queue: no serious or critical axe violation');
    await shot(page, 'proposals-queue');

    await page.navigate(`${server.base}/console/proposals/${toApprove}`);
    t.match(await pageText(page), /Waiting for a person to decide/);
    t.same(await accessibilityViolations(page), [], 'proposal: no serious or critical axe violation');
    const walk = await keyboardWalk(page);
    t.same(walk.reached, walk.inPageOrder, 'Tab reaches everything, in page order');
    await shot(page, 'proposal-pending');
    await typeInto(page, 'Reason (required to reject: the person who asked reads it)', 'Yes, please remind them.');
    await press(page, 'Approve');
    t.match(await pageText(page), /Approved\. The proposal executor runs it shortly/);
    const approved = await proposal(toApprove);
    t.match(approved, {
      status: 'approved',
      decided_by: agency.manager.userId,
      decision_note: 'Yes, please remind them.',
    });
    t.match(await decidedEvents(toApprove), [{ data: { decision: 'approved', proposed_operation: 'createTask' } }]);
    const audit = await db
      .selectFrom('audit_events')
      .select(['details', 'resource_ids'])
      .where('agency_id', '=', agency.agencyId)
      .where('operation_id', '=', 'decideProposal')
      .execute();
    t.match(audit, [{ details: { actor: `user:${agency.manager.userId}` } }], 'audited as the manager');

    t.equal(await executeApproved(db, server.app.gateway), 1, 'the executor ran it');
    const executed = await proposal(toApprove);
    t.equal(executed.status, 'executed');
    const taskId = (executed.execution_result!.body as { data: { id: string } }).data.id;
    t.ok(await db.selectFrom('tasks').select('id').where('id', '=', taskId).executeTakeFirst(), 'the task exists');
    await page.navigate(`${server.base}/console/proposals/${toApprove}`);
    const outcome = await pageText(page);
    t.match(outcome, /Executed/);
    t.match(outcome, new RegExp(`Task created\\s+${taskId}`));
    t.match(outcome, /Decided by\s+Manager Person/);
    t.same(await accessibilityViolations(page), [], 'executed proposal: no serious or critical axe violation');
    await shot(page, 'proposal-executed');

    await page.navigate(`${server.base}/console/proposals/${toReject}`);
    await press(page, 'Reject');
    t.match(await pageText(page), /Say why you reject it/, 'the browser asks for the reason');
    t.equal((await proposal(toReject)).status, 'pending');
    await typeInto(page, 'Reason (required to reject: the person who asked reads it)', 'Not an agency expense.');
    await press(page, 'Reject');
    t.match(await pageText(page), /Rejected: nothing will run\./);
    t.match(await proposal(toReject), { status: 'rejected', decision_note: 'Not an agency expense.' });
    t.match(await decidedEvents(toReject), [{ data: { decision: 'rejected' } }]);
    t.equal(await executeApproved(db, server.app.gateway), 0, 'nothing else to run');
    await shot(page, 'proposal-rejected');

    await page.navigate(`${server.base}/console/proposals?status=executed`);
    const executedQueue = await pageText(page);
    t.match(executedQueue, /Remind the physician\./);
    t.notMatch(executedQueue, /Lunch for the team/, 'filtered by status');
  },
);
