import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { errorMessage, filesOf, parseCommand, runParsed, withFiles, type Runtime } from './cli.js';
import { AdminError } from './command.js';
import type { AdminRequest, AdminResponse } from './socket-protocol.js';

function checkedRequest(request: unknown): AdminRequest {
  const { argv, files } = (request ?? {}) as Partial<AdminRequest>;
  const strings = (value: unknown): value is string[] =>
    Array.isArray(value) && value.every((item) => typeof item === 'string');
  if (!strings(argv) || !strings(files))
    throw new AdminError('not an admin request: { "argv": [strings], "files": [strings] }');
  return { argv, files };
}

/**
 * The command reads copies of the files the CLI sent, under their own names (its output and refusals name them), in
 * a private directory of the data directory: the store's data is there already, under the same protection.
 */
async function withCopies<T>(
  paths: string[],
  files: string[],
  dataDir: string,
  run: (copies: string[]) => Promise<T>,
): Promise<T> {
  if (files.length !== paths.length)
    throw new AdminError(`the request carries ${files.length} files for ${paths.length} arguments`);
  if (paths.length === 0) return run([]);
  const dir = await mkdtemp(join(dataDir, 'admin-files-'));
  try {
    const copies = paths.map((path) => join(dir, basename(path)));
    await Promise.all(copies.map((copy, i) => writeFile(copy, Buffer.from(files[i], 'base64'), { mode: 0o600 })));
    return await run(copies);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A server runs one request of its admin socket: parsed and run as the CLI runs it, answered with its output or refusal. */
export async function runRequest(request: unknown, runtime: Runtime): Promise<AdminResponse> {
  try {
    const { argv, files } = checkedRequest(request);
    const parsed = parseCommand(argv);
    return {
      output: await withCopies(filesOf(parsed), files, runtime.config.dataDir, (copies) =>
        runParsed(withFiles(parsed, copies), runtime),
      ),
    };
  } catch (err) {
    return { error: errorMessage(err) };
  }
}
