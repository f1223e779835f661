import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { loadConfig, loadServerConfig } from '../../src/config.js';

t.test('token settings: defaults derived from the port', async (t) => {
  t.match(loadConfig({ PORT: '8080' }), {
    tokenIssuer: 'http://localhost:8080',
    tokenAudience: 'http://localhost:8080/api/v1/ext',
    tokenTtlSeconds: 900,
    authStateTtlMs: 5000,
  });
});

t.test('token settings: explicit values, trailing slash dropped from the issuer', async (t) => {
  const config = loadConfig({
    TOKEN_ISSUER: 'https://api.agency.example/',
    TOKEN_AUDIENCE: 'extension-api',
    TOKEN_TTL_SECONDS: '300',
    AUTH_STATE_TTL_MS: '0',
  });
  t.match(config, {
    tokenIssuer: 'https://api.agency.example',
    tokenAudience: 'extension-api',
    tokenTtlSeconds: 300,
    authStateTtlMs: 0,
  });
});

t.test('bad token settings stop the start with one line', async (t) => {
  t.throws(() => loadConfig({ TOKEN_ISSUER: 'api.example' }), {
    message: 'TOKEN_ISSUER must be an absolute URL, got "api.example"',
  });
  t.throws(() => loadConfig({ TOKEN_ISSUER: 'https://api.example/?x=1' }), { message: /without query or fragment/ });
  t.throws(() => loadConfig({ TOKEN_ISSUER: 'ftp://api.example' }), { message: /must be an http\(s\) URL/ });
  t.throws(() => loadConfig({ TOKEN_TTL_SECONDS: '30' }), {
    message: 'TOKEN_TTL_SECONDS must be an integer >= 60, got "30"',
  });
  t.throws(() => loadConfig({ TOKEN_TTL_SECONDS: '86401' }), {
    message: 'TOKEN_TTL_SECONDS must be at most 86400, got "86401"',
  });
  t.throws(() => loadConfig({ AUTH_STATE_TTL_MS: '-1' }), { message: /AUTH_STATE_TTL_MS must be an integer >= 0/ });
});

t.test('TRUST_PROXY: the proxies whose X-Forwarded-For is believed', async (t) => {
  t.equal(loadConfig({}).trustProxy, false, 'unset: the socket address, the header ignored');
  t.equal(loadConfig({ TRUST_PROXY: 'false' }).trustProxy, false);
  t.same(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 192.0.2.7 ,loopback,2001:db8::/32' }).trustProxy, [
    '10.0.0.0/8',
    '192.0.2.7',
    'loopback',
    '2001:db8::/32',
  ]);
  t.throws(() => loadConfig({ TRUST_PROXY: 'true' }), {
    message:
      "TRUST_PROXY=true would believe any X-Forwarded-For a client sends; list the proxies' addresses or CIDR ranges instead",
  });
  for (const bad of ['1', '10.0.0.0/33', '10.0.0.0/8/8', 'proxy.internal', '10.0.0.0/8,', '::1/129', '10.0.0.0/x']) {
    t.throws(
      () => loadConfig({ TRUST_PROXY: bad }),
      {
        message: `TRUST_PROXY must be false or a comma-separated list of proxy addresses or CIDR ranges (or loopback, linklocal, uniquelocal), got "${bad}"`,
      },
      bad,
    );
  }
});

t.test(
  'on PostgreSQL the server needs TOKEN_ISSUER: each process would otherwise name its own port as issuer',
  async (t) => {
    const postgres = { DATABASE_URL: 'postgres://db.internal/ext' };
    t.throws(() => loadServerConfig(postgres), {
      message:
        'TOKEN_ISSUER must be set when DATABASE_URL is: the public base URL that every server process names as issuer (e.g. https://api.agency.example)',
    });
    t.equal(
      loadServerConfig({ ...postgres, TOKEN_ISSUER: 'https://api.agency.example' }).tokenIssuer,
      'https://api.agency.example',
    );
    t.equal(
      loadServerConfig({ PORT: '8080' }).tokenIssuer,
      'http://localhost:8080',
      'the embedded store is one process: its port is a fine default',
    );
    t.equal(
      loadConfig(postgres).databaseUrl,
      postgres.DATABASE_URL,
      'the admin tool and migrations issue no tokens and need no issuer',
    );
  },
);

// Starting tsx takes seconds on a busy machine.
t.test(
  'the server refuses to start on PostgreSQL without TOKEN_ISSUER, before connecting',
  { timeout: 120_000 },
  async (t) => {
    const { TOKEN_ISSUER: _unset, ...env } = process.env;
    const run = await new Promise<{ code: number; output: string }>((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', 'src/server.ts'],
        { env: { ...env, DATABASE_URL: 'postgres://127.0.0.1:1/none' } },
        (err, stdout, stderr) => resolve({ code: err ? Number(err.code) : 0, output: stdout + stderr }),
      );
    });
    t.equal(run.code, 1);
    t.match(run.output, /TOKEN_ISSUER must be set when DATABASE_URL is/);
  },
);

t.test('config: where the key comes from', async (t) => {
  const key = randomBytes(32);
  t.same(loadConfig({ SECRETS_KEY: key.toString('base64') }).secretsKey, {
    current: { from: 'SECRETS_KEY', key },
    previous: [],
  });
  t.same(loadConfig({ SECRETS_KEY_FILE: '/run/secrets/kek' }).secretsKey.current, {
    from: 'SECRETS_KEY_FILE',
    path: '/run/secrets/kek',
  });
  t.same(
    loadConfig({ DATA_DIR: '/srv/ext/data' }).secretsKey.current,
    { from: 'default file', path: '/srv/ext/data.secrets-key' },
    'beside the data directory',
  );
  t.same(
    loadConfig({ DATABASE_URL: 'postgres://db/ext' }).secretsKey.current,
    { from: 'none' },
    'PostgreSQL has no default',
  );
  const [a, b] = [randomBytes(32), randomBytes(32)];
  t.same(
    loadConfig({
      SECRETS_KEY: key.toString('hex'),
      SECRETS_KEY_PREVIOUS: `${a.toString('base64')}, ${b.toString('hex')},`,
    }).secretsKey.previous,
    [a, b],
  );
});

t.test('config: bad key settings stop the start with one line', async (t) => {
  const key = randomBytes(32).toString('base64');
  t.throws(() => loadConfig({ SECRETS_KEY: 'not-a-key' }), {
    message: /^SECRETS_KEY must be 32 random bytes in base64 or hex .*, got 9 characters$/,
  });
  t.throws(() => loadConfig({ SECRETS_KEY: key, SECRETS_KEY_FILE: '/run/secrets/kek' }), {
    message: 'set SECRETS_KEY or SECRETS_KEY_FILE, not both',
  });
  t.throws(() => loadConfig({ SECRETS_KEY: key, SECRETS_KEY_PREVIOUS: `${key},short` }), {
    message: /^SECRETS_KEY_PREVIOUS \(item 2\) must be 32 random bytes/,
  });
});
