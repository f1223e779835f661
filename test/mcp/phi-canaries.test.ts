import { Writable } from 'node:stream';
import { t } from 'tap';
import { pino } from 'pino';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createAgency } from '../../src/admin/agency.js';
import { createUser } from '../../src/admin/user.js';
import { createMcpClient } from '../../src/admin/mcp-client.js';
import { seedDemoAgency } from '../../src/demo/seed.js';
import { testDatabase } from '../helpers/database.js';
import { connectedClient, listeningApp, withOwnPassword } from './mcp-helpers.js';

/**
 * The MCP surface is de-identified: the seeded patients' names, phones, MRNs, dates of birth and street addresses
 * appear in no tool output (structured or text), no tool error, no page of the authorization flow and no log line.
 */
const logLines: string[] = [];
const logger = pino(
  { level: 'trace' },
  new Writable({ write: (chunk, _encoding, done) => done(void logLines.push(String(chunk))) }),
);
const db = (await testDatabase()).db;
const { base } = await listeningApp(t, logger);
const redirectUri = 'http://127.0.0.1:1/callback';

await createAgency(db, { id: 'mcp-canary', name: 'MCP canary agency', serviceZips: ['02108'] });
await seedDemoAgency(db, { agencyId: 'mcp-canary', size: 'small' });
const user = await createUser(db, {
  agencyId: 'mcp-canary',
  email: 'canary.reader@example.org',
  name: 'Casey Reader',
  role: 'staff',
});
const mcpClient = await createMcpClient(db, 'Canary assistant', [redirectUri]);

const patients = await db
  .selectFrom('patients')
  .select(['first_name', 'last_name', 'mrn', 'dob', 'primary_phone', 'alt_phone', 'address_line_1'])
  .where('agency_id', '=', 'mcp-canary')
  .execute();
/** Values that identify a patient; names as "First Last" and as the last name when it is distinctive enough to search for. */
const identifiers = new Set<string>();
for (const p of patients) {
  identifiers.add(`${p.first_name} ${p.last_name}`);
  for (const value of [p.mrn, p.dob, p.primary_phone, p.alt_phone, p.address_line_1]) if (value) identifiers.add(value);
  for (const phone of [p.primary_phone, p.alt_phone]) if (phone) identifiers.add(phone.replace(/\D/g, ''));
}

function leaks(text: string): string[] {
  return [...identifiers].filter((value) => text.includes(value));
}

type ListedQuery = { id: string; parameters_schema: { required?: string[] } };
const queriesListed = async (client: Client) =>
  (
    (await client.callTool({ name: 'braes.queries.list', arguments: {} })).structuredContent as {
      queries: ListedQuery[];
    }
  ).queries;
/** The last 365 days for a query's date range, the defaults for the rest. */
function sampleParameters(query: ListedQuery): Record<string, string> {
  const day = (msAgo: number) => new Date(Date.now() - msAgo).toISOString().slice(0, 10);
  const range: Record<string, string> = { from: day(365 * 86_400_000), to: day(0) };
  return Object.fromEntries((query.parameters_schema.required ?? []).map((name) => [name, range[name]]));
}

t.ok(patients.length > 100 && identifiers.size > patients.length * 4, 'the seeded patients give the canaries');

t.test('no identifier in any tool output, tool error, page of the flow or log line', async (t) => {
  const { client, authorization } = await connectedClient(
    base,
    mcpClient.clientId,
    redirectUri,
    await withOwnPassword(db, user),
  );
  const outputs: string[] = authorization.browser.seen.map((page) => `${page.location ?? ''}\n${page.body}`);
  const { tools } = await client.listTools();
  outputs.push(JSON.stringify(tools));
  const year = new Date().getUTCFullYear();
  const calls: { name: string; arguments: Record<string, unknown> }[] = [
    ...tools.map((tool) => ({ name: tool.name, arguments: {} })),
    { name: 'braes.referrals.pipeline', arguments: { year: year - 1 } },
    { name: 'braes.visits.missed_late', arguments: { year: year - 1 } },
    { name: 'braes.quality.hhvbp_summary', arguments: { performance_year: year - 2 } },
    { name: 'braes.quality.hhvbp_measures', arguments: { performance_year: 2020 } },
    { name: 'braes.remittances.totals', arguments: { from: `${year - 1}-01-01`, to: `${year - 1}-12-31` } },
    { name: 'braes.remittances.totals', arguments: { from: `${year}-01-01`, to: `${year}-12-31` } },
    ...(await queriesListed(client)).map((query) => ({
      name: 'braes.queries.run',
      arguments: { query_id: query.id, parameters: sampleParameters(query), limit: 1000 },
    })),
    { name: 'braes.referrals.pipeline', arguments: { year: 'not a year' } },
    { name: 'braes.no.such.tool', arguments: {} },
  ];
  let errors = 0;
  for (const call of calls) {
    const result = await client
      .callTool(call)
      .catch((err: Error) => ({ isError: true, content: [{ type: 'text', text: err.message }] }));
    if (result.isError) errors++;
    outputs.push(JSON.stringify(result));
  }
  t.ok(errors >= 2, 'errors were answered too');
  t.ok(outputs.join('').includes('active_patients'), 'real outputs were read');
  t.same(leaks(outputs.join('\n')), [], 'no identifier in any output');
  t.ok(
    logLines.filter((line) => line.includes('"path":"/api/v1/mcp"')).length >= 10,
    'every MCP call has its access line',
  );
  t.same(leaks(logLines.join('\n')), [], 'no identifier in any log line');
});
