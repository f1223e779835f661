// JSON Pointer (RFC 6901) over plain JSON documents: the contract, request bodies.

/** `key` as one token of a pointer: `~` becomes `~0`, `/` becomes `~1`. */
export const pointerToken = (key: string): string => key.replaceAll('~', '~0').replaceAll('/', '~1');

/** The value a document-local pointer (`#/a/b`) names in `document`, or undefined where a step is missing. */
export function atPointer(document: unknown, pointer: string): unknown {
  return pointer
    .slice(2)
    .split('/')
    .reduce<unknown>(
      (at, token) => (at as Record<string, unknown> | undefined)?.[token.replaceAll('~1', '/').replaceAll('~0', '~')],
      document,
    );
}
