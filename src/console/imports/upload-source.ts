import { createHash } from 'node:crypto';
import type { EraSource } from '../../resources/remittances/era-import.js';
import type { UploadedFile } from '../console-context.js';

/**
 * An uploaded 835 as the importer reads a file on disk: the digest is of its bytes (as src/admin/era-file.ts hashes
 * them), so the same file sent through the console or the CLI is recognised as already imported either way.
 */
export function uploadSource(file: UploadedFile): EraSource {
  return {
    name: uploadName(file),
    sha256: createHash('sha256').update(file.content).digest('hex'),
    byteSize: file.content.length,
    async *chunks() {
      yield file.content.toString('utf8');
    },
  };
}

/** The file's own name, without any folder a browser may send, as the CLI keeps a path's base name. */
export function uploadName(file: UploadedFile): string {
  return file.filename.split(/[\\/]/).at(-1) ?? '';
}
