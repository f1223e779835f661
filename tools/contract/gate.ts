import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BreakingChange } from './findings.js';
import { redoclyBreakingChanges } from './redocly-diff.js';
import { tableChanges } from './table-rules.js';

type Node = Record<string, any>;

/** Every breaking change from base to head: redocly's rules, then the document's own tables. */
export function breakingChanges(base: Node, head: Node, redoclyConfig: string): BreakingChange[] {
  const dir = mkdtempSync(join(tmpdir(), 'contract-check-'));
  try {
    writeFileSync(join(dir, 'base.json'), JSON.stringify(base));
    writeFileSync(join(dir, 'head.json'), JSON.stringify(head));
    return [...redoclyBreakingChanges(join(dir, 'base.json'), join(dir, 'head.json'), redoclyConfig), ...tableChanges(base, head)];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
