/** A change between two contract documents that breaks a client written against the first. */
export interface BreakingChange {
  /** The rule that found it: a `redocly diff` rule id, or one of the document-table rules (table-rules.ts). */
  rule: string;
  /** JSON pointer in the head document (in the base one when the thing was removed). */
  pointer: string;
  message: string;
}

export const formatChange = (change: BreakingChange): string =>
  `  ${change.rule}  ${change.pointer}\n    ${change.message}`;
