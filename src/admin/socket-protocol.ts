import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import type { CommandOutput } from './command.js';

/**
 * The admin socket of a server on the embedded store: the admin CLI sends it one command per connection, one line of
 * JSON each way, and the server runs the command on its own database handle (it holds the data directory's lock).
 */
const ADMIN_SOCKET = 'extension-api.sock';

/** Beside the data directory's lock file: whoever may run the server may use it. */
export function adminSocketPath(dataDir: string): string {
  return join(dataDir, ADMIN_SOCKET);
}

/** A request or an answer is at most this long (a line of JSON): files travel in it, base64-encoded. */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** The files of one command are at most this long: their base64 with the arguments fits in a message. */
export const MAX_FILE_BYTES = 40 * 1024 * 1024;

export interface AdminRequest {
  /** The command line as the operator typed it: the server parses it as the CLI does. */
  argv: string[];
  /** The content of each file the command line names (its positionals, in order), base64. */
  files: string[];
}

export type AdminResponse = { output: CommandOutput } | { error: string };

/** Reads one line of JSON, refusing one over MAX_MESSAGE_BYTES; what follows the line is ignored. */
export function readMessage(socket: Socket): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (err: Error | undefined) => {
      socket.off('data', onData).off('close', onClose).off('error', finish);
      if (err) return reject(err);
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch (parseError) {
        reject(parseError as Error);
      }
    };
    const onData = (chunk: Buffer) => {
      const end = chunk.indexOf(0x0a);
      const part = end === -1 ? chunk : chunk.subarray(0, end);
      size += part.length;
      if (size > MAX_MESSAGE_BYTES) return finish(new Error(`a message over ${MAX_MESSAGE_BYTES} bytes`));
      chunks.push(part);
      if (end !== -1) finish(undefined);
    };
    const onClose = () => finish(new Error('the connection closed before a whole message'));
    socket.on('data', onData).on('close', onClose).on('error', finish);
  });
}

export function messageLine(message: AdminRequest | AdminResponse): string {
  return `${JSON.stringify(message)}\n`;
}

/** Connects to a running server's admin socket; undefined when none listens there (no server, or a crashed one's socket). */
export function connectToServer(path: string): Promise<Socket | undefined> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    socket.once('connect', () => {
      socket.off('error', onError);
      resolve(socket);
    });
    const onError = (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ECONNREFUSED') resolve(undefined);
      else reject(new Error(`cannot reach the running server through ${path}: ${err.code ?? err.message}`));
    };
    socket.once('error', onError);
  });
}
