import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import type { Logger } from 'pino';
import type { Runtime } from './admin/cli.js';
import { runRequest } from './admin/remote.js';
import { adminSocketPath, messageLine, readMessage } from './admin/socket-protocol.js';

/** A request must arrive whole within this time: a stuck client holds no connection, nor the shutdown, open. */
const REQUEST_TIMEOUT_MS = 30_000;

export interface AdminSocket {
  readonly path: string;
  /** Takes no new command, waits for those running, and removes the socket. */
  close(): Promise<void>;
}

async function serve(socket: Socket, runtime: Runtime, logger: Logger): Promise<void> {
  socket.on('error', (err) => logger.warn(`admin socket: ${err.message}`));
  const deadline = setTimeout(() => socket.destroy(), REQUEST_TIMEOUT_MS);
  let request: unknown;
  try {
    request = await readMessage(socket);
  } catch (err) {
    logger.warn(`admin socket: no request read (${(err as Error).message})`);
    socket.destroy();
    return;
  } finally {
    clearTimeout(deadline);
  }
  // The command runs to its end even if the CLI is gone: it may be writing, and a transaction is not cut halfway.
  socket.end(messageLine(await runRequest(request, runtime)));
}

/**
 * The embedded store's admin socket, so that the admin CLI works while this server holds the data directory: one
 * command per connection, run on this server's database handle. Owner-only from the instant it exists (mode 600, from
 * the umask at bind time): Node cannot tell a peer's uid (no SO_PEERCRED), so the file mode is the access control,
 * as the data directory's own permissions are for the data.
 */
export async function listenAdminSocket(runtime: Runtime, logger: Logger): Promise<AdminSocket> {
  const path = adminSocketPath(runtime.config.dataDir);
  // This process holds the data directory's lock, so a socket already there was left by a server that crashed.
  rmSync(path, { force: true });
  const server = createServer((socket) => void serve(socket, runtime, logger));
  // listen() binds a path synchronously, so the umask is in force for that instant only (a file that a thread of the
  // pool happened to create then would be owner-only too, which is harmless).
  const umask = process.umask(0o177);
  try {
    server.listen(path);
  } finally {
    process.umask(umask);
  }
  await once(server, 'listening');
  return { path, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
