import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KNOWN_ERROR_CODE } from '../../src/docs/contract-documents.js';
import type { BreakingChange } from './findings.js';
import { redoclyBreakingChanges } from './redocly-diff.js';
import { tableChanges } from './table-rules.js';

type Node = Record<string, any>;

/**
 * The known error codes grow within a version by design: every `code` that uses them also admits any
 * string, so a new code changes no value a client can receive. The table rules judge x-svc-error-codes itself.
 */
const knownCodeAdded = (change: BreakingChange) =>
  change.rule === 'enum-values-added' && change.pointer.startsWith(`#/components/schemas/${KNOWN_ERROR_CODE}/`);

/** Every breaking change from base to head: redocly's rules, then the document's own tables. */
export function breakingChanges(base: Node, head: Node, redoclyConfig: string): BreakingChange[] {
  const dir = mkdtempSync(join(tmpdir(), 'contract-check-'));
  try {
    writeFileSync(join(dir, 'base.json'), JSON.stringify(base));
    writeFileSync(join(dir, 'head.json'), JSON.stringify(head));
    const generic = redoclyBreakingChanges(join(dir, 'base.json'), join(dir, 'head.json'), redoclyConfig).filter(
      (change) => !knownCodeAdded(change),
    );
    return [...generic, ...tableChanges(base, head)];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
