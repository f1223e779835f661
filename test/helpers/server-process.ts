import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from './ports.js';
import { TEST_SECRETS_KEY } from './secrets.js';

/** src/server.ts in a process of its own on `databaseUrl`, once it answers /livez; `env` adds to or overrides its settings. */
export async function startServer(databaseUrl: string, options: { port?: number; env?: Record<string, string> } = {}): Promise<{ url: string; child: ChildProcess }> {
  const port = options.port ?? (await freePort());
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      LOG_LEVEL: 'warn',
      TOKEN_ISSUER: 'http://extension-api.test',
      SHED_EVENT_LOOP_DELAY_MS: '0',
      DEMO: '',
      SECRETS_KEY: TEST_SECRETS_KEY,
      ...options.env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    if (await fetch(`${url}/livez`).then((r) => r.ok, () => false)) return { url, child };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('server did not start');
}
