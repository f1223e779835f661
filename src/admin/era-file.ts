import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { EraSource } from '../resources/remittances/era-import.js';

/** A file on disk: read once to hash it, once to import it. */
export async function fileSource(path: string): Promise<EraSource> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return {
    name: basename(path),
    sha256: hash.digest('hex'),
    byteSize: (await stat(path)).size,
    chunks: () => createReadStream(path, { encoding: 'utf8', highWaterMark: 256 * 1024 }),
  };
}

/**
 * A file already in memory (an upload to the console): its digest is of its bytes, as a file's on disk, so the same
 * file sent either way is recognised as already imported.
 */
export function bytesSource(name: string, content: Buffer): EraSource {
  return {
    name,
    sha256: createHash('sha256').update(content).digest('hex'),
    byteSize: content.length,
    async *chunks() {
      yield content.toString('utf8');
    },
  };
}
