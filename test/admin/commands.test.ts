import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { agencyCommands } from '../../src/admin/agency.js';
import { AdminError, type Command, type Options } from '../../src/admin/command.js';
import { integrationCommands } from '../../src/admin/integration.js';
import { keysCommands } from '../../src/admin/keys.js';
import { tokenCommands } from '../../src/admin/token.js';
import { loadConfig } from '../../src/config.js';
import { CONTRACT_CAPABILITIES, CONTRACT_SCOPES } from '../../src/identity/grants.js';
import { clientKey, jwksFile, jwksOf } from '../helpers/client-keys.js';
import { testDatabase } from '../helpers/database.js';
import { testKeyEncryption } from '../helpers/secrets.js';

/** The command layer in-process on the test database (cli.test.ts runs the real script). */
const { db } = await testDatabase();
const config = loadConfig({});
const run = (command: Command, options: Options) =>
  command.run({ db, config, options, keyEncryption: () => testKeyEncryption });

async function refusal(command: Command, options: Options): Promise<string> {
  try {
    await run(command, options);
    return 'accepted';
  } catch (err) {
    if (!(err instanceof AdminError)) throw err;
    return err.message;
  }
}

const agency = 'cmd-agency';
await run(agencyCommands.create, {
  id: agency,
  name: 'Cape Ann Visiting Nurses',
  'service-zips': '01930, 01938,01930',
  timezone: 'America/New_York',
});
const { json: created } = await run(integrationCommands.create, { agency, name: 'Revenue dashboard' });
const clientId = created.client_id as string;

t.test('agency set --order-sla-days: the signature SLA of physician orders, 7 days unless set', async (t) => {
  const sla = async () =>
    (await db.selectFrom('agencies').select('order_sla_days').where('id', '=', agency).executeTakeFirstOrThrow())
      .order_sla_days;
  t.equal(await sla(), 7, 'default');
  const { json, text } = await run(agencyCommands.set, { id: agency, 'order-sla-days': '14' });
  t.same(json, { agency_id: agency, order_sla_days: 14 });
  t.match(text, /order_sla_days: 14/);
  t.equal(await sla(), 14);
  t.match((await run(agencyCommands.list, {})).json.agencies, [{ id: agency, order_sla_days: 14 }]);
  t.equal(
    await refusal(agencyCommands.set, { id: agency, 'order-sla-days': '-1' }),
    '--order-sla-days must be an integer >= 0, got "-1"',
  );
  t.equal(
    await refusal(agencyCommands.set, { id: agency, 'order-sla-days': '366' }),
    '--order-sla-days must be at most 365, got 366',
  );
  t.equal(
    await refusal(agencyCommands.set, { id: agency, 'order-sla-days': 'week' }),
    '--order-sla-days must be an integer >= 0, got "week"',
  );
  t.equal(await refusal(agencyCommands.set, { id: agency }), 'nothing to set: give --order-sla-days');
  t.equal(await refusal(agencyCommands.set, { id: 'nobody', 'order-sla-days': '3' }), 'no agency "nobody"');
  await run(agencyCommands.set, { id: agency, 'order-sla-days': '0' });
  t.equal(await sla(), 0, 'zero: signed the day it was sent');
  await run(agencyCommands.set, { id: agency, 'order-sla-days': '7' });
});

t.test('agency create: validated, with a main office serving the ZIPs', async (t) => {
  const zips = await db
    .selectFrom('agency_service_zips')
    .select('zip_code')
    .where('agency_id', '=', agency)
    .orderBy('zip_code')
    .execute();
  t.same(
    zips.map((z) => z.zip_code),
    ['01930', '01938'],
    'duplicates once',
  );
  t.equal(
    await refusal(agencyCommands.create, { id: agency, name: 'Again', 'service-zips': '01930' }),
    `agency "${agency}" already exists`,
  );
  t.equal(await refusal(agencyCommands.create, { id: 'x', name: 'X' }), 'at least one service ZIP code is required');
  t.equal(
    await refusal(agencyCommands.create, { id: 'bad id', name: 'X', 'service-zips': '01930' }),
    'agency id "bad id" must be 1 to 64 letters, digits, ".", "_" or "-"',
  );
  t.equal(
    await refusal(agencyCommands.create, { id: 'y', name: 'Y', 'service-zips': '01930', timezone: 'Mars/Olympus' }),
    'unknown time zone "Mars/Olympus"',
  );
  t.equal(await refusal(agencyCommands.create, { name: 'Y' }), '--id is required');
});

t.test(
  "agency create: each agency's main office has an id of its own, never one that names another agency's office",
  async (t) => {
    const other = `${agency}-twin`;
    const created = await run(agencyCommands.create, {
      id: other,
      name: 'Cape Ann Visiting Nurses',
      'service-zips': '01930',
    });
    const offices = await db
      .selectFrom('offices')
      .select(['agency_id', 'id'])
      .where('agency_id', 'in', [agency, other])
      .execute();
    t.equal(offices.length, 2);
    t.not(offices[0].id, offices[1].id);
    t.match(created.json, { office_id: /^off_/ });
  },
);

t.test('integration create: grants validated against the contract', async (t) => {
  const { json } = await run(integrationCommands.create, {
    agency,
    name: 'Intake bot',
    scopes: 'all',
    capabilities: 'all',
    'phi-modes': 'no_phi,phi',
    'rate-limit': '120',
    'daily-quota': '1000',
    'cost-budget': '500',
    'contract-version': '1',
  });
  const row = await db
    .selectFrom('extensions')
    .selectAll()
    .where('agency_id', '=', agency)
    .where('id', '=', json.extension_id as string)
    .executeTakeFirstOrThrow();
  t.match(row, {
    scopes: [...CONTRACT_SCOPES],
    capabilities: [...CONTRACT_CAPABILITIES],
    phi_modes: ['no_phi', 'phi'],
    rate_limit_per_minute: 120,
    daily_quota: 1000,
    daily_cost_budget: 500,
    contract_version: '1',
  });
  const partial = await run(integrationCommands.create, {
    agency,
    name: 'Narrow',
    scopes: 'external:tasks:read',
    capabilities: 'tasks.read,tasks.write',
  });
  t.match(
    await db
      .selectFrom('extensions')
      .selectAll()
      .where('id', '=', partial.json.extension_id as string)
      .executeTakeFirstOrThrow(),
    {
      scopes: ['external:tasks:read'],
      capabilities: ['tasks.read', 'tasks.write'],
      phi_modes: ['no_phi'],
      daily_cost_budget: null,
      contract_version: '2',
    },
  );
  const bad = (options: Options) => refusal(integrationCommands.create, { agency, name: 'Bad', ...options });
  t.match(await bad({ scopes: 'external:everything' }), /^unknown scopes: external:everything \(known: /);
  t.match(await bad({ capabilities: 'tasks.delete' }), /^unknown capabilities: tasks.delete/);
  t.match(await bad({ 'phi-modes': 'full' }), /^unknown phi modes: full/);
  t.match(await bad({ 'contract-version': '3' }), /^unknown contract version: 3 \(known: 1, 2\)/);
  t.equal(await bad({ 'rate-limit': '0' }), '--rate-limit must be an integer >= 1, got "0"');
  t.equal(await bad({ 'cost-budget': '-1' }), '--cost-budget must be an integer >= 0, got "-1"');
  t.equal(
    await refusal(integrationCommands.create, { agency: 'nobody', name: 'X' }),
    'no agency "nobody"; create it first with: agency create',
  );
});

t.test('disable, enable, revoke-tokens act on the integration of a client id', async (t) => {
  const status = async () =>
    (
      await db
        .selectFrom('extensions')
        .select('status')
        .where('id', '=', created.extension_id as string)
        .executeTakeFirstOrThrow()
    ).status;
  t.same((await run(integrationCommands.disable, { 'client-id': clientId })).json, {
    client_id: clientId,
    agency_id: agency,
    extension_id: created.extension_id,
  });
  t.equal(await status(), 'disabled');
  await run(integrationCommands.enable, { 'client-id': clientId });
  t.equal(await status(), 'active');
  await run(integrationCommands['revoke-tokens'], { 'client-id': clientId });
  const row = await db
    .selectFrom('extensions')
    .select('tokens_revoked_before')
    .where('id', '=', created.extension_id as string)
    .executeTakeFirstOrThrow();
  t.ok(row.tokens_revoked_before && Math.abs(row.tokens_revoked_before.getTime() - Date.now()) < 60_000);
  t.equal(
    await refusal(integrationCommands.disable, { 'client-id': 'cli_nobody' }),
    'no integration with client id "cli_nobody"',
  );
});

t.test('rotate-secret: a new secret once; the old ones end after the overlap', async (t) => {
  const { json, text } = await run(integrationCommands['rotate-secret'], {
    'client-id': clientId,
    'overlap-hours': '2',
  });
  t.match(json, { client_id: clientId, client_secret: /^sk_/ });
  const hoursLeft = (Date.parse(json.previous_secrets_expire_at as string) - Date.now()) / 3_600_000;
  t.ok(hoursLeft > 1.9 && hoursLeft <= 2, `${hoursLeft} hours`);
  t.match(text, /shown only this once/);
  const defaulted = await run(integrationCommands['rotate-secret'], { 'client-id': clientId });
  t.ok(
    Date.parse(defaulted.json.previous_secrets_expire_at as string) - Date.now() > 23 * 3_600_000,
    'default 24 hours for the current secret',
  );
  const secrets = await db
    .selectFrom('client_secrets')
    .select('expires_at')
    .where('client_id', '=', clientId)
    .orderBy('created_at')
    .execute();
  t.equal(secrets.length, 3);
  t.ok((secrets[0].expires_at!.getTime() - Date.now()) / 3_600_000 <= 2, 'an earlier, shorter overlap is not extended');
  t.equal(secrets[2].expires_at, null);
});

t.test('integration list never shows secrets or hashes', async (t) => {
  const { json, text } = await run(integrationCommands.list, { agency });
  const listed = JSON.stringify(json);
  t.notOk(listed.includes('sk_') || listed.includes('$scrypt$') || text.includes('$scrypt$'));
  t.match(
    (json.integrations as { client_ids: string[] }[]).find((i) => i.client_ids.includes(clientId)),
    { active_secrets: [{}, {}, {}] },
  );
});

t.test(
  'integration create --jwks-file and integration keys: public keys instead of, or beside, a secret',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'jwks-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const keysAgency = 'keys-agency';
    await run(agencyCommands.create, { id: keysAgency, name: 'Key Agency', 'service-zips': '01930' });
    const [first, second] = [clientKey('RS384', 'first'), clientKey('ES384', 'second')];
    const keyed = await run(integrationCommands.create, {
      agency: keysAgency,
      name: 'Backend service',
      'jwks-file': jwksFile(dir, jwksOf(first)),
    });
    t.match(keyed.json, { client_id: /^cli_/, agency_id: keysAgency, keys: { kids: ['first'], jwks_url: null } });
    t.notOk('client_secret' in keyed.json, 'no secret is made for a keyed integration');
    t.match(keyed.text, /authenticates with its keys \(private_key_jwt\), and has no secret/);
    const withSecret = await run(integrationCommands.create, { agency: keysAgency, name: 'Dashboard' });
    const both = await run(integrationCommands.create, { agency: keysAgency, name: 'Both ways' });
    const replaced = await run(integrationCommands.keys, {
      'client-id': both.json.client_id as string,
      'jwks-file': jwksFile(dir, jwksOf(first, second)),
    });
    t.match(replaced.json, { client_id: both.json.client_id, keys: { kids: ['first', 'second'] } });
    await run(integrationCommands.keys, {
      'client-id': both.json.client_id as string,
      'jwks-file': jwksFile(dir, jwksOf(second)),
    });

    const listed = await run(integrationCommands.list, { agency: keysAgency });
    const byName = Object.fromEntries(
      (listed.json.integrations as { name: string }[]).map((i) => [i.name, i as Record<string, unknown>]),
    );
    t.match(byName['Backend service'], {
      authentication: ['private_key_jwt'],
      active_secrets: [],
      keys: { kids: ['first'] },
    });
    t.match(byName.Dashboard, { authentication: ['client_secret'], keys: null });
    t.match(byName['Both ways'], {
      authentication: ['client_secret', 'private_key_jwt'],
      keys: { kids: ['second'], jwks_url: null },
    });
    t.same(byName['Backend service'].client_ids, [keyed.json.client_id]);
    t.match(listed.text, /authentication: +client_secret, private_key_jwt\n/);
    t.notOk(JSON.stringify(listed.json).includes('"n":'), 'the keys themselves are not listed');
    t.ok(withSecret.json.client_secret);
  },
);

t.test('integration keys: what is refused, naming the problem, and nothing changed', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jwks-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const key = clientKey('ES384', 'only');
  const privateFile = jwksFile(dir, { keys: [{ ...key.privateKey.export({ format: 'jwk' }), kid: 'only' }] });
  t.equal(
    await refusal(integrationCommands.keys, { 'client-id': clientId, 'jwks-file': privateFile }),
    `${privateFile}: keys[0].d: a private key member; register the public key only`,
  );
  t.match(
    await refusal(integrationCommands.create, { agency, name: 'Leaky', 'jwks-file': privateFile }),
    /keys\[0\]\.d: a private key member/,
  );
  t.match(
    await refusal(integrationCommands.keys, { 'client-id': clientId, 'jwks-url': 'https://10.20.30.40/jwks.json' }),
    /^https:\/\/10\.20\.30\.40\/jwks\.json: the JWKS URL was not fetched: 10\.20\.30\.40 is in 10\.0\.0\.0\/8 \(Private-Use/,
  );
  t.match(
    await refusal(integrationCommands.keys, { 'client-id': clientId, 'jwks-url': 'http://keys.example/jwks.json' }),
    /must be https:\/\//,
  );
  t.equal(
    await refusal(integrationCommands.keys, {
      'client-id': clientId,
      'jwks-file': jwksFile(dir, jwksOf(key)),
      'jwks-url': 'https://keys.example/jwks.json',
    }),
    'give --jwks-file or --jwks-url, not both',
  );
  t.equal(await refusal(integrationCommands.keys, { 'client-id': clientId }), '--jwks-file or --jwks-url is required');
  t.equal(
    await refusal(integrationCommands.keys, { 'client-id': 'cli_nope', 'jwks-file': jwksFile(dir, jwksOf(key)) }),
    'no integration with client id "cli_nope"',
  );
  const notJson = join(dir, 'not.json');
  writeFileSync(notJson, 'keys');
  t.equal(
    await refusal(integrationCommands.keys, { 'client-id': clientId, 'jwks-file': notJson }),
    `${notJson} is not JSON: a JWKS is {"keys": [...]}`,
  );
  const stored = await db.selectFrom('client_key_sets').select('client_id').where('client_id', '=', clientId).execute();
  t.same(stored, [], 'no keys registered for the refused attempts');
});

t.test('token revoke: kept until the latest expiry of the token', async (t) => {
  const { json } = await run(tokenCommands.revoke, { 'client-id': clientId, jti: 'tok_abc' });
  const secondsKept = (Date.parse(json.kept_until as string) - Date.now()) / 1000;
  t.ok(secondsKept > config.tokenTtlSeconds - 60 && secondsKept <= config.tokenTtlSeconds, `${secondsKept} s`);
  await run(tokenCommands.revoke, { 'client-id': clientId, jti: 'tok_abc' });
  t.equal(
    (await db.selectFrom('revoked_tokens').select('jti').where('jti', '=', 'tok_abc').execute()).length,
    1,
    'idempotent',
  );
});

t.test('keys rotate: a new active key; the previous one retired with a verify window', async (t) => {
  const first = await run(keysCommands.rotate, {});
  const second = await run(keysCommands.rotate, {});
  t.match(second.json, { kid: /^[A-Za-z0-9_-]{43}$/, retired: [{ kid: first.json.kid }] });
  const active = await db.selectFrom('signing_keys').select('kid').where('retired_at', 'is', null).execute();
  t.same(
    active.map((k) => k.kid),
    [second.json.kid],
  );
  t.match(second.text, /verifies until/);
});
