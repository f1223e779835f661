/** The benchmarked servers as child processes on loopback ports. */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('..', import.meta.url));
const children: ChildProcess[] = [];

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
      .once('error', reject)
      .listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo;
        server.close(() => resolve(port));
      });
  });
}

/** Starts `node <nodeArgs…>` with PORT set and waits until it answers /livez; returns its base URL. */
export async function start(name: string, nodeArgs: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const port = await freePort();
  // Child logs go to stderr so stdout carries only the table.
  const child = spawn(process.execPath, nodeArgs, {
    cwd: root,
    env: { ...env, PORT: String(port) },
    stdio: ['ignore', 2, 2],
  });
  children.push(child);
  const url = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(200)) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}) before answering /livez`);
    if (
      await fetch(`${url}/livez`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return url;
  }
  throw new Error(`${name} did not answer ${url}/livez within 60 s`);
}

/**
 * Waits until the service admits calls: a process that has just started compiles on every first call and may shed
 * load (503 PLATFORM_SERVICE_UNAVAILABLE) until its event loop catches up. The health operation without a token is
 * refused after the shedding check (401) once the service admits.
 */
export async function untilAdmitting(name: string, url: string): Promise<void> {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(500)) {
    const response = await fetch(`${url}/api/v1/ext/health`);
    await response.arrayBuffer();
    if (response.status !== 503) return;
  }
  throw new Error(`${name} still sheds load (503) 60 s after it started: the machine is too busy to benchmark`);
}

/** The node arguments of `npm start` (package.json), so the benchmark runs the service with the runtime flags it ships with. */
export function npmStartArgs(): string[] {
  // `exec` lets npm's shell give way to node, so that a signal to npm reaches the server.
  const [command, ...args] = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
    .scripts.start.trim()
    .replace(/^exec\s+/, '')
    .split(/\s+/);
  if (command !== 'node') throw new Error(`the start script must run node, not "${command}"`);
  return args;
}

async function stop(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  if ((await Promise.race([exited, sleep(5_000, 'timeout')])) === 'timeout') child.kill('SIGKILL');
}

export async function stopAll(): Promise<void> {
  await Promise.all(children.map(stop));
}
