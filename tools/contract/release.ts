import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { contractVersionsOf } from '../../src/docs/contract-documents.js';
import { liveVersions, readSource, root, snapshotPath, snapshotText } from './snapshots.js';

/**
 * Writes the released snapshot of every live contract version (contracts/vN/<manifest_version>.json) from
 * openapi.json. Deterministic: the same openapi.json gives the same bytes, and running it again changes nothing.
 * A released snapshot is never edited: a snapshot that exists with other content is refused unless --replace
 * (for a release that was never published).
 */
function main(): number {
  const { values } = parseArgs({ options: { replace: { type: 'boolean' } } });
  const source = readSource();
  const current = contractVersionsOf(source).find((v) => v.status === 'current');
  if (current?.manifest_version !== source.info.version) {
    console.error(
      `contract:release: info.version ${source.info.version} must equal the current version's manifest_version (${current?.manifest_version}) in x-svc-contract-versions`,
    );
    return 1;
  }
  let refused = false;
  for (const live of liveVersions(source)) {
    const path = snapshotPath(live.version, live.manifest);
    const text = snapshotText(live.document);
    const shown = relative(root, path);
    if (existsSync(path) && readFileSync(path, 'utf8') === text) {
      console.log(`contract:release: ${shown} unchanged`);
    } else if (existsSync(path) && !values.replace) {
      console.error(
        `contract:release: ${shown} is released and differs from openapi.json; a release is never edited: bump manifest_version of version ${live.version} (a compatible change) or add a contract version (a breaking one). --replace overwrites a release that was never published.`,
      );
      refused = true;
    } else {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text);
      console.log(`contract:release: wrote ${shown}`);
    }
  }
  return refused ? 1 : 0;
}

process.exitCode = main();
