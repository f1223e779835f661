import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { contractVersionsOf, versionDocument } from '../../src/docs/contract-documents.js';

type Node = Record<string, any>;

export const root = join(import.meta.dirname, '..', '..');
export const redoclyConfig = join(root, 'redocly.yaml');
export const readJson = (path: string): Node => JSON.parse(readFileSync(path, 'utf8'));
export const readSource = (): Node => readJson(join(root, 'openapi.json'));

/** A released snapshot's bytes: stable key order and formatting, so that a release is reproducible. */
export const snapshotText = (doc: Node): string => `${JSON.stringify(doc, null, 2)}\n`;

export const snapshotPath = (version: string, manifest: string): string =>
  join(root, 'contracts', `v${version}`, `${manifest}.json`);

const semver = (name: string) =>
  name
    .replace(/\.json$/, '')
    .split('.')
    .map(Number);
const bySemver = (a: string, b: string) => {
  const [x, y] = [semver(a), semver(b)];
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
};

/** The newest released snapshot of a contract version, or undefined before its first release. */
export function latestSnapshot(version: string): { manifest: string; path: string } | undefined {
  const dir = join(root, 'contracts', `v${version}`);
  if (!existsSync(dir)) return undefined;
  const names = readdirSync(dir)
    .filter((n) => /^\d+\.\d+\.\d+\.json$/.test(n))
    .sort(bySemver);
  const newest = names.at(-1);
  return newest ? { manifest: newest.replace(/\.json$/, ''), path: join(dir, newest) } : undefined;
}

/** The versions still served (retired ones are refused and no longer listed), each as openapi.json describes it now. */
export function liveVersions(source: Node): Array<{ version: string; manifest: string; document: Node }> {
  return contractVersionsOf(source).map((entry) => ({
    version: entry.version,
    manifest: entry.manifest_version,
    document: versionDocument(source, entry.version),
  }));
}
