import type { CompiledQuery } from 'kysely';
import t from 'tap';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { seedDemoAgency } from '../../src/demo/seed.js';
import { testDatabase } from '../helpers/database.js';
import { createTestIntegration } from '../helpers/identity.js';
import { freePort } from '../helpers/ports.js';
import { walk } from '../helpers/prism-walk.js';
import { testKeyEncryption } from '../helpers/secrets.js';

// Distributing the tenant tables by agency (docs/scaling.md) needs no rewrite of the partition only if every statement
// it runs on them names one agency: this walks every operation in both PHI modes and reads each statement it ran.
const database = await testDatabase();
const tenantTables = new Set(
  (await database.db.introspection.getTables())
    .filter((table) => table.columns.some((c) => c.name === 'agency_id'))
    .map((table) => table.name),
);
/** Keyed by a credential's own id, found before the agency is known: docs/scaling.md's plan gives each a routed key. */
const KEYED_BEFORE_THE_AGENCY = new Set(['client_credentials', 'client_secrets', 'revoked_tokens']);

const statements: CompiledQuery[] = [];
let recording = false;
t.teardown(database.observe({ statement: (query) => void (recording && statements.push(query)) }));

const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const config = loadConfig({});
const app = await buildApp({
  config: {
    ...config,
    tokenIssuer: base,
    tokenAudience: `${base}/api/v1/ext`,
    inProcessWorkers: [],
    pressure: { ...config.pressure, eventLoopDelayMs: 0 },
  },
  database,
  keyEncryption: testKeyEncryption,
});
t.teardown(() => app.close());
await app.listen({ port, host: '127.0.0.1' });

const walker = await createTestIntegration(database.db);
const other = await createTestIntegration(database.db);
await seedDemoAgency(database.db, { agencyId: walker.agencyId, size: 'small' });
await seedDemoAgency(database.db, { agencyId: other.agencyId, size: 'small' });

/** The tables a statement names after from, join, into or update (Kysely quotes them; raw statements may not). */
function tablesOf(text: string): string[] {
  return [...text.matchAll(/\b(?:from|join|into|update)\s+"?([a-z_]+)"?/gi)].map((m) => m[1]);
}

t.test(
  'every statement the partition runs on a tenant table is bound to the caller agency, and only to it',
  async (t) => {
    recording = true;
    const outcomes = [
      ...(await walk(base, undefined, walker, 'boundphi')),
      ...(await walk(base, undefined, walker, 'boundnophi')),
    ];
    recording = false;
    t.ok(outcomes.filter((o) => o.status === 200).length > 30, 'the walk reached the operations');
    t.ok(statements.length > 100, `${statements.length} statements recorded`);
    const unbound = statements.flatMap((statement) => {
      const tables = tablesOf(statement.sql);
      if (!tables.some((name) => tenantTables.has(name)) || tables.some((name) => KEYED_BEFORE_THE_AGENCY.has(name)))
        return [];
      // A batch (the audit flush) carries its rows as one JSON parameter: the agencies named in it count too.
      const names = (agencyId: string) =>
        statement.parameters.some(
          (p) => p === agencyId || (typeof p === 'string' && p.startsWith('[') && p.includes(`"${agencyId}"`)),
        );
      const agencies = new Set([walker.agencyId, other.agencyId].filter(names));
      const bound = statement.sql.includes('agency_id') && agencies.size === 1 && agencies.has(walker.agencyId);
      return bound ? [] : [`${[...agencies].join(',') || 'no agency'}: ${statement.sql.slice(0, 300)}`];
    });
    t.same(unbound, [], 'statements on tenant tables without exactly the caller agency');
  },
);
