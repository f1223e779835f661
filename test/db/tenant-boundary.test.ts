import t from 'tap';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

// The layer rule dependency-cruiser cannot state: what code reaches tenant data through. Resources, proposals, the
// importers, the admin commands, the agency console and the demo seed build no store, write and join only through the tenant store
// (src/db/tenant-store.ts), and reach every agency's rows only through its one named escape, `unscoped(why)`.
const root = join(import.meta.dirname, '../..');
const SCANNED = ['src/resources', 'src/proposals', 'src/platform-commands', 'src/admin', 'src/demo', 'src/console'];

/** Each place that builds on the raw handle, and why it must: every agency's rows, or a table no agency owns. */
const EXCEPTIONS: Record<string, { receiver: string; why: string }[]> = {
  'src/proposals/proposals.ts': [
    { receiver: 'db', why: 'takeApproved: the executor takes approved proposals of every agency' },
  ],
  'src/admin/proposal.ts': [
    { receiver: 'db', why: 'decider: a person is found by their email, whichever agency they belong to' },
  ],
  'src/platform-commands/platform-command.ts': [
    { receiver: 'trx', why: 'the runner checks that the agency exists (agencies belong to no agency)' },
  ],
  'src/admin/agency.ts': [
    { receiver: 'trx', why: 'createAgency: the agency goes into the registry of agencies, which belongs to no agency' },
    { receiver: 'db', why: 'agency list: every agency of the registry, with its service ZIPs' },
  ],
  'src/console/console-plugin.ts': [
    { receiver: 'db', why: "a signed-in page names the person's agency, from the registry of agencies" },
  ],
  'src/admin/demo.ts': [{ receiver: 'db', why: 'ensureDemo: whether the registry holds any agency yet' }],
  'src/admin/integration.ts': [
    { receiver: 'db', why: 'onIntegrationOf: a client id is looked up in every agency, to find the agency it names' },
  ],
  'src/admin/user.ts': [
    { receiver: 'db', why: 'user disable: a person is found by their email, whichever agency they belong to' },
  ],
  'src/admin/mcp-client.ts': [
    { receiver: 'db', why: 'MCP clients belong to the platform: people of every agency sign in through them' },
    { receiver: 'trx', why: 'disabling a client ends its authorizations, held for people of every agency' },
  ],
};

function files(path: string): string[] {
  const full = join(root, path);
  if (statSync(full).isFile()) return [path];
  return readdirSync(full)
    .flatMap((name) => files(join(path, name)))
    .filter((file) => file.endsWith('.ts'));
}

const sources = SCANNED.flatMap(files).map((file) => ({
  file: relative(root, join(root, file)),
  text: readFileSync(join(root, file), 'utf8'),
}));

t.test(
  'only the tenant store builds queries: no other receiver of selectFrom, insertInto, updateTable, deleteFrom',
  async (t) => {
    t.ok(sources.length > 30, 'the scanned files are found');
    for (const { file, text } of sources) {
      const allowed = new Set((EXCEPTIONS[file] ?? []).map((exception) => exception.receiver));
      // Chains broken over lines (`store\n  .insertInto(`) read as one.
      const calls = [
        ...text
          .replace(/\s*\n\s*\./g, '.')
          .matchAll(/(\w+)\??\.(selectFrom|insertInto|updateTable|deleteFrom|with)\(/g),
      ];
      const strays = calls
        .filter(([, receiver]) => receiver !== 'store' && !allowed.has(receiver))
        .map(([call]) => call);
      t.same(strays, [], `${file}: queries through the tenant store only`);
    }
  },
);

t.test('no hand-written agency in a write, a filter or a join', async (t) => {
  for (const { file, text } of sources) {
    const handWritten = [
      ...text.matchAll(/\b(where|whereRef|on|onRef)\(\s*'[\w.]*agency_id'/g),
      // Up to the statement's execution: an agency_id in a response body is no write.
      ...text.matchAll(/\.(values|set)\((?:(?!\.execute)[\s\S])*?\bagency_id:/g),
    ].map(([match]) => match);
    t.same(handWritten, [], `${file}: the store adds the agency`);
  }
});

t.test('no store is built outside the gateway and the platform command runner', async (t) => {
  for (const { file, text } of sources) {
    if (file === 'src/platform-commands/platform-command.ts') continue;
    t.notMatch(
      text,
      /new (TenantStore|CommandStore)\(/,
      `${file}: takes its store from the gateway or runPlatformCommand`,
    );
  }
});

t.test('every use of the escape says why', async (t) => {
  for (const { file, text } of sources) {
    for (const [call] of text.matchAll(/\bunscoped\([^)]*\)/g))
      t.match(call, /^unscoped\('[^']{10,}'\)$/, `${file}: ${call}`);
  }
});
