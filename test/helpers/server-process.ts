import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from './ports.js';
import { TEST_SECRETS_KEY } from './secrets.js';

export interface ServerProcess {
  url: string;
  child: ChildProcess;
}

/**
 * src/server.ts in a child process on `databaseUrl`, once it answers /livez. Processes that share a database name one
 * issuer; a test whose browser flow goes to the issuer passes a process's own port and URL for both. `env` adds to
 * or overrides the process's settings.
 */
export async function startServerProcess(
  databaseUrl: string,
  {
    port,
    issuer = 'http://extension-api.test',
    env = {},
  }: { port?: number; issuer?: string; env?: Record<string, string> } = {},
): Promise<ServerProcess> {
  const listenOn = port ?? (await freePort());
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(listenOn),
      LOG_LEVEL: 'warn',
      TOKEN_ISSUER: issuer,
      SHED_EVENT_LOOP_DELAY_MS: '0',
      DEMO: '',
      SECRETS_KEY: TEST_SECRETS_KEY,
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${listenOn}`;
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    if (
      await fetch(`${url}/livez`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return { url, child };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('server did not start');
}
