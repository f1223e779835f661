// The layers of src/ (checked by `npm run -s lint:layers`, part of `npm test`). A module may import its own layer and the
// layers below it, never one above; there are no import circles, type-only imports included. Bottom to top:
//
//   shared    src/shared/: the principal, ids and pseudonym kinds, versioning types, the error classes.
//   observability src/observability/: metrics (prom-client), load-shedding signals, tracing (OpenTelemetry, loaded
//             only when on). Low, so that every layer above can report to it; it knows the database, the gateway and
//             workers only through the small interfaces it defines (ObservedDatabase, BufferObserver...).
//   db        src/db/: Kysely on pg or PGlite, the platform's tables, bound cursors, the tenant-bound store. Also each
//             resource family's table types (src/resources/<family>/<family>-tables.ts: they live with their
//             family, but the DB schema is built from them), and src/project-files.ts, which reads openapi.json and
//             package.json from disk: I/O, so below the domain, which must not use it.
//   domain    src/domain/: pure rules (see domain-is-pure). Also src/catalog/, a pure view of the route table
//             that routes serve.
//   identity  src/identity/: client secrets, signing keys, tokens, the authenticator, sealed secrets.
//   events    src/events/: webhooks' outbox and delivery queues, envelope and payloads (reduced by the domain's
//             no_phi reducer), signing, receiver address checks and requests, and the receiver helper
//             verifyDelivery. Beside identity, whose sealed secrets it opens; below the gateway, whose pipeline
//             writes commands' events through its outbox, and the workers, which deliver them.
//   gateway   src/gateway/ (and src/workers/, the background jobs the gateway feeds): what runs around a handler. Also
//             src/proposals/: proposals of the MCP surface, stored and executed through the gateway's direct calls;
//             and src/platform-commands/: what runs around a platform command outside a request (admin CLI, importers,
//             demo seed, proposal decisions), as the gateway runs around a handler.
//   wiring    src/config.ts (reads the environment; above identity, whose key settings it decides) and
//             src/services.ts (builds the long-lived identity and gateway collaborators of one app).
//   resources src/resources/<family>/: each family's handlers, repository (its SQL, reached through the tenant-bound
//             store), view (rows to the contract's shapes) and stores that implement the domain's ports.
//   app       src/app.ts, src/docs/ (the reference page), src/admin/ (the admin CLI), src/demo/ (the demo seed), and
//             src/mcp/ (the MCP transport: tools run operations through the gateway's direct calls, as HTTP routes do).
//   server    src/server.ts, and src/admin-socket.ts, through which a server on the embedded store runs the admin CLI's
//             commands (the commands stay in src/admin/).
//
// src/generated/ is data and types from openapi.json: every layer may import it, and it imports only src/shared/.
const TABLE_TYPES = '^src/resources/[^/]+/[^/]+-tables\\.ts$';

const layers = [
  { name: 'shared', path: '^src/shared/' },
  { name: 'observability', path: '^src/observability/' },
  { name: 'db', path: ['^src/(db/|project-files\\.ts$)', TABLE_TYPES] },
  { name: 'domain', path: '^src/(domain|catalog)/' },
  { name: 'identity', path: '^src/identity/' },
  { name: 'events', path: '^src/events/' },
  { name: 'gateway', path: '^src/(gateway|workers|proposals|platform-commands)/' },
  { name: 'wiring', path: '^src/(config|services)\\.ts$' },
  { name: 'resources', path: '^src/resources/', pathNot: TABLE_TYPES },
  { name: 'app', path: '^src/(app\\.ts$|docs/|admin/|demo/|mcp/|console/)' },
  { name: 'server', path: '^src/(server|admin-socket)\\.ts$' },
];

/** Table types are the db layer's though they sit in src/resources/: they are upward only for the layers below db. */
const tableTypesBelowOrAt = (i) => layers.slice(0, i + 1).some((l) => [l.path].flat().includes(TABLE_TYPES));

const noUpward = layers.slice(0, -1).map((layer, i) => ({
  name: `no-upward-from-${layer.name}`,
  comment: `${layer.name} may import only ${layers
    .slice(0, i + 1)
    .map((l) => l.name)
    .join(', ')} and generated, not ${layers
    .slice(i + 1)
    .map((l) => l.name)
    .join(', ')}.`,
  severity: 'error',
  from: { path: layer.path, pathNot: layer.pathNot },
  to: { path: layers.slice(i + 1).flatMap((l) => l.path), pathNot: tableTypesBelowOrAt(i) ? TABLE_TYPES : undefined },
}));

module.exports = {
  forbidden: [
    ...noUpward,
    {
      name: 'generated-is-data',
      comment:
        'src/generated/ is usable from every layer, so it may import only src/shared/ (codegen writes its imports).',
      severity: 'error',
      from: { path: '^src/generated/' },
      to: { path: '^src/', pathNot: '^src/(generated|shared)/' },
    },
    {
      name: 'no-circular',
      comment: 'No import circles, type-only imports included: a circle has no bottom to build or test from.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'domain-is-pure',
      comment:
        "The domain and the catalog do no I/O: no Node built-in (node:fs, node:net...) and no package (pg, kysely, PGlite...), except for their types (kysely's Insertable).",
      severity: 'error',
      from: { path: '^src/(domain|catalog)/' },
      to: {
        dependencyTypes: ['core', 'npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'],
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'domain-is-pure-of-db',
      comment:
        'The domain takes types from db, and its pure match-key function; never a query, nor a file read (project-files.ts).',
      severity: 'error',
      from: { path: '^src/(domain|catalog)/' },
      to: {
        path: ['^src/(db/|project-files\\.ts$)', TABLE_TYPES],
        pathNot: '^src/db/patient-match-keys\\.ts$',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'gateway-core-is-transport-neutral',
      comment:
        'The gateway core serves every transport (HTTP, in-process direct calls, MCP): nothing it imports, even for types, reaches Fastify. The HTTP adapter is src/gateway/http/.',
      severity: 'error',
      from: { path: '^src/gateway/core/' },
      to: { path: '^node_modules/fastify/', reachable: true },
    },
    {
      name: 'receiver-helper-stands-alone',
      comment:
        'verifyDelivery is what receivers run: it needs nothing but node:crypto, so a receiver can take the file alone.',
      severity: 'error',
      from: { path: '^src/events/verify-delivery\\.ts$' },
      to: { pathNot: '^crypto$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'client-stands-alone',
      comment:
        'The shipped client (clients/typescript) is installed by integrators: of the service it takes only the receiver helper, which needs nothing but node:crypto.',
      severity: 'error',
      from: { path: '^clients/typescript/src/' },
      to: { path: '^(src|codegen|db|scripts|test|tools)/', pathNot: '^src/events/verify-delivery\\.ts$' },
    },
    {
      name: 'in-a-layer',
      comment: 'Every module of src/ belongs to a layer above (or to src/generated/): add a new folder to `layers`.',
      severity: 'error',
      from: { path: '^src/', pathNot: [...layers.flatMap((l) => l.path), '^src/generated/'] },
      to: {},
    },
    {
      name: 'resolvable',
      comment: 'Every import resolves, so that no dependency escapes the rules above.',
      severity: 'error',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: they tie layers together as much as any other.
    tsPreCompilationDeps: true,
    // Resolves the `.js` specifiers of NodeNext to the `.ts` files beside them.
    tsConfig: { fileName: 'tsconfig.json' },
    // Packages that publish subpaths only through package.json "exports" (@modelcontextprotocol/sdk/server/mcp.js).
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'node', 'default', 'types'] },
  },
};
