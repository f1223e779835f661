import { canonicalJson } from '../shared/canonical-json.js';

/** Seals a value under a binding and opens it again: identity/cursor-seal.ts's CursorSeal, whose key the database keeps sealed. */
interface CursorCipher {
  seal(value: unknown, binding: Uint8Array): Promise<string>;
  open(cursor: string, binding: Uint8Array): Promise<unknown>;
}

/** Whom cursors are issued to: the caller's agency, extension and PHI mode (a Principal is one). */
export interface CursorHolder {
  readonly agencyId: string;
  readonly extensionId: string;
  readonly phiMode: string;
}

/**
 * What a cursor continues, besides its route: a list's filters, a governed query's parameters. Members that are
 * undefined count as absent, and key order does not matter.
 */
export type CursorSelection = Readonly<Record<string, unknown>>;

/**
 * The cursors of one caller on one route: the gateway makes one per request of an operation that takes a cursor,
 * so that no handler can seal or open one unbound. Holder, operation, path parameters and selection are the
 * cipher's additional authenticated data, computed only when a cursor is sealed or opened and never stored in
 * it: a cursor sent by another agency, extension or PHI mode, to another route, or with other filters fails
 * exactly like a forged one.
 */
export class CursorSealer {
  constructor(
    private readonly cursorSeal: CursorCipher,
    private readonly holder: CursorHolder,
    private readonly operationId: string,
    private readonly pathParams: CursorSelection,
  ) {}

  seal(value: unknown, selection: CursorSelection): Promise<string> {
    return this.cursorSeal.seal(value, this.binding(selection));
  }

  /** The sealed value, or undefined for a cursor not sealed by this service for this holder, route and selection. */
  open(cursor: string, selection: CursorSelection): Promise<unknown> {
    return this.cursorSeal.open(cursor, this.binding(selection));
  }

  private binding(selection: CursorSelection): Buffer {
    const { agencyId, extensionId, phiMode } = this.holder;
    return Buffer.from(
      canonicalJson([agencyId, extensionId, phiMode, this.operationId, this.pathParams, selection]),
      'utf8',
    );
  }
}
