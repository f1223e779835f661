/**
 * The contract's changelog, written from the document itself (pure): what each contract version added or renamed
 * over the one before (the `x-svc-since` and `x-svc-v1-name` marks), its status, deprecation date, successor and
 * sunset (`x-svc-contract-versions`), the dated request shapes (`x-svc-request-shapes`) and the deprecated request
 * fields (`deprecated` with `x-svc-successor`). Served at /platform/api/changelog.md and in each published document.
 */
type Node = Record<string, any>;

interface Mark {
  schema: string;
  property: string;
  node: Node;
}

function propertyMarks(doc: Node): Mark[] {
  return Object.entries<Node>(doc.components.schemas).flatMap(([schema, node]) => {
    const parts: Node[] = [node, ...(node.allOf ?? [])];
    return parts.flatMap((part) =>
      Object.entries<Node>(part.properties ?? {}).map(([property, value]) => ({ schema, property, node: value })),
    );
  });
}

const list = (lines: string[], none: string) =>
  lines.length > 0 ? lines.map((line) => `- ${line}`).join('\n') : `- ${none}`;
const date = (value: string | null | undefined) => (value ? value.slice(0, 10) : null);

function versionSection(entry: Node, marks: Mark[]): string {
  const status =
    entry.status === 'current'
      ? 'current'
      : `deprecated since ${date(entry.deprecated_at)}, successor version ${entry.successor}`;
  const sunset =
    entry.status === 'current' ? '' : entry.sunset ? `, sunset ${date(entry.sunset)}` : ', no sunset date set';
  const heading = `## Version ${entry.version} (manifest ${entry.manifest_version}): ${status}${sunset}`;
  if (entry.version !== '2')
    return `${heading}\n\nThe first contract version: the operations and shapes of its own document (/platform/api/v${entry.version}/openapi.json).`;
  const added = marks.filter((m) => m.node['x-svc-since'] === '2').map((m) => `\`${m.schema}.${m.property}\``);
  const renamed = marks
    .filter((m) => typeof m.node['x-svc-v1-name'] === 'string')
    .map((m) => `\`${m.schema}.${m.node['x-svc-v1-name']}\` is now \`${m.property}\``);
  return [
    heading,
    `### Added in version 2 (absent from version 1 responses)\n\n${list(added, 'nothing')}`,
    `### Renamed in version 2\n\n${list(renamed, 'nothing')}`,
  ].join('\n\n');
}

function requestSection(doc: Node, marks: Mark[]): string {
  const shapes = Object.entries<Node[]>(doc['x-svc-request-shapes'] ?? {}).flatMap(([operationId, entries]) =>
    entries.map((s) => {
      const fate =
        s.status === 'current'
          ? 'current'
          : `deprecated, successor ${s.successor}${s.sunset ? `, sunset ${date(s.sunset)}` : ', no sunset date'}`;
      return `\`${operationId}\` shape ${s.shape}: ${s.description.replace(/\.$/, '')} (${fate})`;
    }),
  );
  const fields = marks
    .filter((m) => m.node.deprecated === true && typeof m.node['x-svc-successor'] === 'string')
    .map((m) => `\`${m.schema}.${m.property}\` is deprecated: send \`${m.node['x-svc-successor']}\` instead`);
  return `## Request shapes (both versions)\n\nA deprecated shape or field still works; the response carries \`Deprecation\` and a \`meta.deprecations\` entry naming what to send instead.\n\n${list([...shapes, ...fields], 'none')}`;
}

export function contractChangelog(doc: Node): string {
  const marks = propertyMarks(doc);
  const versions = [...doc['x-svc-contract-versions']].sort(
    (a: Node, b: Node) => Number(b.version) - Number(a.version),
  );
  return `${[
    '# Contract changelog',
    'Generated from the contract document. Within a version, changes are additive only (`npm run contract:check` refuses a breaking one); a breaking change is a new version.',
    ...versions.map((entry) => versionSection(entry, marks)),
    requestSection(doc, marks),
  ].join('\n\n')}\n`;
}

/** The changelog one heading level down, to sit under a document's description. */
export const changelogSection = (doc: Node): string => contractChangelog(doc).replace(/^#/gm, '##');
