import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import { t } from 'tap';
import { createAgency } from '../../src/admin/agency.js';
import { createMcpClient } from '../../src/admin/mcp-client.js';
import { createUser } from '../../src/admin/user.js';
import { SIGN_IN_FAILURE_LIMITS } from '../../src/identity/mcp-authorization/sign-in-failures.js';
import { HASHING_LIMITS } from '../../src/identity/secrets.js';
import { testDatabase, testDatabaseUrl } from '../helpers/database.js';
import { freePort } from '../helpers/ports.js';
import { startServerProcess } from '../helpers/server-process.js';
import { FormBrowser, formAction } from './browser.js';
import { listeningApp } from './mcp-helpers.js';

const { perSubject: PER_ACCOUNT, perAddress: PER_ADDRESS, windowSeconds: WINDOW_SECONDS } = SIGN_IN_FAILURE_LIMITS;

/**
 * Every scrypt this process runs, counted from its call to its callback: how many at once at most, and in all. Counted
 * at node:crypto itself (syncBuiltinESMExports passes the replacement to every module's import), whatever calls it.
 */
const hashes = { running: 0, peak: 0, total: 0 };
const scrypt = crypto.scrypt;
crypto.scrypt = ((...args: unknown[]) => {
  const done = args.pop() as (err: Error | null, key: Buffer) => void;
  hashes.total++;
  hashes.peak = Math.max(hashes.peak, ++hashes.running);
  (scrypt as (...args: unknown[]) => void)(...args, (err: Error | null, key: Buffer) => {
    hashes.running--;
    done(err, key);
  });
}) as typeof crypto.scrypt;
syncBuiltinESMExports();

const { db } = await testDatabase();
const redirectUri = 'http://127.0.0.1:1/callback';
const isCallback = (url: string) => url.startsWith(redirectUri);
await createAgency(db, { id: 'sign-in-limits', name: 'Sign-in limits agency', serviceZips: ['02108'] });
const client = await createMcpClient(db, 'Test assistant', [redirectUri]);
let users = 0;
const newUser = () =>
  createUser(db, {
    agencyId: 'sign-in-limits',
    email: `person${++users}.${Date.now()}@example.org`,
    name: 'Pat Person',
    role: 'staff',
  });

/**
 * A browser at the login page of `issuer`, its requests forwarded for `address` by a proxy on loopback; `signIn` posts
 * the form, to another process of the same issuer when given its origin.
 */
async function loginFrom(issuer: string, address: string) {
  const browser = new FormBrowser({ 'x-forwarded-for': address });
  const params = {
    client_id: client.clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'mcp:tools no_phi',
    resource: `${issuer}/api/v1/mcp`,
    code_challenge: 'a'.repeat(43),
    code_challenge_method: 'S256',
  };
  const login = await browser.follow(`${issuer}/api/v1/oauth/authorize?${new URLSearchParams(params)}`, isCallback);
  if (login.status !== 200) throw new Error(`no login page: ${login.status} ${login.body.slice(0, 300)}`);
  const action = new URL(formAction(login.body, issuer));
  return {
    signIn: (email: string, password: string, origin = issuer) =>
      browser.post(`${origin}${action.pathname}`, { email, password }, isCallback),
  };
}

t.test('in one process', async (t) => {
  const { base } = await listeningApp(t, undefined, { trustProxy: ['127.0.0.1'] });

  t.test(
    'wrong passwords on one account: then 429, the guessing address refused even the right password, a clean address signed in',
    async (t) => {
      const user = await newUser();
      const guesser = await loginFrom(base, '198.51.100.1');
      for (let i = 0; i < PER_ACCOUNT; i++)
        t.equal((await guesser.signIn(user.email, `wrong-${i}`)).status, 401, `failure ${i + 1}`);
      const limited = await guesser.signIn(user.email, 'wrong-again');
      t.equal(limited.status, 429);
      t.match(limited.body, /Too many attempts/);
      t.match(limited.body, /try again in \d+ minutes?/);
      const retryAfter = Number(limited.headers.get('retry-after'));
      t.ok(retryAfter >= 1 && retryAfter <= WINDOW_SECONDS, `Retry-After ${retryAfter}`);

      hashes.total = 0;
      const right = await guesser.signIn(user.email, user.initialPassword);
      t.equal(right.status, 429, "the guessing address's right password too, while the account is over its limit");
      t.equal(hashes.total, 0, 'refused before any hash');
      const person = await (await loginFrom(base, '198.51.100.2')).signIn(user.email, user.initialPassword);
      t.equal(person.status, 200, 'an address without failures signs in');
      t.match(person.body, /Choose your own password/, "signed in: on to the first sign-in's new password");
      const typo = await (await loginFrom(base, '198.51.100.5')).signIn(user.email, 'wrong-elsewhere');
      t.equal(
        typo.status,
        429,
        'a wrong password from an address without failures is counted, and answered as the limit',
      );
    },
  );

  t.test('an address over its limit is refused before any hash, whichever account it tries', async (t) => {
    const user = await newUser();
    const guesser = await loginFrom(base, '198.51.100.3');
    for (let i = 0; i < PER_ADDRESS; i++) {
      const page = await guesser.signIn(`nobody-${i}.${Date.now()}@example.org`, 'wrong');
      if (page.status !== 401) throw new Error(`failure ${i + 1}: ${page.status}`);
    }
    hashes.total = 0;
    const refused = await guesser.signIn(user.email, user.initialPassword);
    t.equal(refused.status, 429);
    t.match(refused.body, /Too many attempts/);
    t.equal(hashes.total, 0, 'refused before any hash');
    t.equal(
      (await (await loginFrom(base, '198.51.100.4')).signIn(user.email, user.initialPassword)).status,
      200,
      'another address signs in',
    );
  });

  t.test(
    'sign-ins at once: the hashes running stay within the bound, and those refused say when to retry',
    async (t) => {
      const browsers = await Promise.all(Array.from({ length: 12 }, (_, i) => loginFrom(base, `198.51.100.${20 + i}`)));
      hashes.peak = 0;
      const pages = await Promise.all(
        browsers.map((browser, i) => browser.signIn(`flood-${i}.${Date.now()}@example.org`, 'wrong')),
      );
      t.ok(hashes.peak <= HASHING_LIMITS.running, `at most ${HASHING_LIMITS.running} at once: ${hashes.peak}`);
      t.same(
        new Set(pages.map((page) => page.status).filter((status) => status !== 401 && status !== 503)),
        new Set(),
        'wrong (401) or busy (503)',
      );
      for (const page of pages.filter((p) => p.status === 503)) {
        t.ok(Number(page.headers.get('retry-after')) >= 1, 'Retry-After');
        t.match(page.body, /try again in \d+ seconds/);
      }
    },
  );
});

const skip = process.env.TEST_DATABASE_URL
  ? false
  : "needs real PostgreSQL shared by two server processes (PGlite is one process's database)";

t.test(
  'failures made at once through two server processes on one database are counted together',
  { skip, timeout: 180_000 },
  async (t) => {
    const ports = [await freePort(), await freePort()];
    const issuer = `http://127.0.0.1:${ports[0]}`;
    const servers = await Promise.all(
      ports.map((port) => startServerProcess(testDatabaseUrl()!, { port, issuer, env: { TRUST_PROXY: 'loopback' } })),
    );
    for (const { child } of servers) t.teardown(() => void child.kill());
    const user = await newUser();
    const guesser = await loginFrom(issuer, '198.51.100.50');
    const failures = await Promise.all(
      Array.from({ length: PER_ACCOUNT }, (_, i) => guesser.signIn(user.email, `wrong-${i}`, servers[i % 2].url)),
    );
    t.same(
      failures.map((page) => page.status),
      Array(PER_ACCOUNT).fill(401),
    );
    for (const { url } of servers)
      t.equal((await guesser.signIn(user.email, 'wrong-again', url)).status, 429, `refused by ${url}`);
  },
);
