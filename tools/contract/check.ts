import { parseArgs } from 'node:util';
import { formatChange, type BreakingChange } from './findings.js';
import { breakingChanges } from './gate.js';
import { latestSnapshot, liveVersions, readJson, readSource, redoclyConfig, snapshotText } from './snapshots.js';

const usage = `npm run -s contract:check [-- --base BASE.json --head HEAD.json]

Without arguments: compares openapi.json, as each live contract version serves it, with that version's latest
released snapshot (contracts/vN/X.Y.Z.json). With --base and --head: compares any two OpenAPI documents (a
pinned copy of a served document against today's, in a consumer's CI). Exits 1 on a breaking change, naming each.`;

function report(label: string, changes: BreakingChange[]): boolean {
  if (changes.length === 0) {
    console.log(`contract:check: ${label}: no breaking change`);
    return true;
  }
  console.error(
    `contract:check: ${label}: ${changes.length} breaking change${changes.length === 1 ? '' : 's'}\n${changes.map(formatChange).join('\n')}`,
  );
  return false;
}

function checkReleased(): boolean {
  const source = readSource();
  let ok = true;
  for (const live of liveVersions(source)) {
    const snapshot = latestSnapshot(live.version);
    if (!snapshot) {
      console.error(
        `contract:check: contract version ${live.version} has no released snapshot in contracts/v${live.version}/; run npm run contract:release`,
      );
      ok = false;
      continue;
    }
    const base = readJson(snapshot.path);
    const compatible = report(
      `version ${live.version}, released ${snapshot.manifest} -> openapi.json`,
      breakingChanges(base, live.document, redoclyConfig),
    );
    ok &&= compatible;
    if (compatible && snapshotText(base) !== snapshotText(live.document) && snapshot.manifest === live.manifest) {
      console.log(
        `  note: openapi.json has compatible changes since ${snapshot.manifest}; release them under a new manifest version (x-svc-contract-versions, info.version) with npm run contract:release`,
      );
    }
  }
  ok ||
    console.error(
      '\nA breaking change ships only as a new contract version; the old one is deprecated (Deprecation, Sunset when set, a successor link), never edited. See README "Contract governance".',
    );
  return ok;
}

function main(): number {
  const { values } = parseArgs({
    options: { base: { type: 'string' }, head: { type: 'string' }, help: { type: 'boolean' } },
  });
  if (values.help) {
    console.log(usage);
    return 0;
  }
  if (!values.base !== !values.head) {
    console.error(`contract:check: give both --base and --head, or neither\n\n${usage}`);
    return 2;
  }
  if (values.base && values.head)
    return report(
      `${values.base} -> ${values.head}`,
      breakingChanges(readJson(values.base), readJson(values.head), redoclyConfig),
    )
      ? 0
      : 1;
  return checkReleased() ? 0 : 1;
}

process.exitCode = main();
