import type { ContractVersion } from '../../shared/versioning.js';

/**
 * A read's answer that is the same for every caller of this process (the catalog: the deployment's contract, routes,
 * queries and capabilities, nothing of the caller). The gateway encodes its JSON once per contract version and sends
 * those bytes, instead of stringifying and encoding the same large document on every call.
 */
export class ConstantAnswer<T> {
  private readonly encoded = new Map<ContractVersion, Buffer>();

  constructor(readonly body: T) {}

  /** The body's JSON in `version`'s shape (made by `shape`, on the first call for that version). */
  encodedFor(version: ContractVersion, shape: (body: T) => unknown): Buffer {
    let bytes = this.encoded.get(version);
    if (!bytes) this.encoded.set(version, (bytes = Buffer.from(JSON.stringify(shape(this.body)), 'utf8')));
    return bytes;
  }
}

/** What a handler answered, without the wrapper of a constant answer. */
export const plainBody = (body: unknown): unknown => (body instanceof ConstantAnswer ? body.body : body);
