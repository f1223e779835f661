import t from 'tap';
import { agencyCommands } from '../../src/admin/agency.js';
import type { Command, Options } from '../../src/admin/command.js';
import { integrationCommands } from '../../src/admin/integration.js';
import { tokenCommands } from '../../src/admin/token.js';
import { userCommands } from '../../src/admin/user.js';
import { webhookCommands } from '../../src/admin/webhook.js';
import { loadConfig } from '../../src/config.js';
import { testDatabase } from '../helpers/database.js';
import { testKeyEncryption } from '../helpers/secrets.js';

/** Every admin command that changes an agency's data leaves an audit record of the operator, committed with the change. */
const { db } = await testDatabase();
const config = loadConfig({});
const run = (command: Command, options: Options) =>
  command.run({ db, config, options, keyEncryption: () => testKeyEncryption });

const agency = 'operator-audit';
await run(agencyCommands.create, { id: agency, name: 'Operator Audit Home Care', 'service-zips': '02108' });

const auditOf = (operation: string) =>
  db
    .selectFrom('audit_events')
    .selectAll()
    .where('agency_id', '=', agency)
    .where('operation_id', '=', operation)
    .execute();

const countAudit = async () =>
  (await db.selectFrom('audit_events').select('id').where('agency_id', '=', agency).execute()).length;

/** What every platform command of the operator records: the platform called, the operator did it. */
const BY_OPERATOR = {
  extension_id: 'platform',
  outcome: 'success',
  phi_mode: 'no_phi',
  details: { actor: 'admin-cli' },
};

t.test('agency create and set: each an audit record of the operator; set names the settings it changed', async (t) => {
  t.match(await auditOf('createAgency'), [{ ...BY_OPERATOR, resource_type: 'agency' }]);
  await run(agencyCommands.set, { id: agency, 'order-sla-days': '10' });
  t.match(await auditOf('setAgency'), [{ ...BY_OPERATOR, details: { actor: 'admin-cli', order_sla_days: 10 } }]);
});

t.test('integration and token commands: each an audit record of the operator naming the extension', async (t) => {
  const { json } = await run(integrationCommands.create, { agency, name: 'Audited integration' });
  const clientId = json.client_id as string;
  await run(integrationCommands.disable, { 'client-id': clientId });
  await run(integrationCommands.enable, { 'client-id': clientId });
  await run(integrationCommands['revoke-tokens'], { 'client-id': clientId });
  await run(integrationCommands['rotate-secret'], { 'client-id': clientId });
  await run(tokenCommands.revoke, { 'client-id': clientId, jti: 'tok_audited' });
  const named = { ...BY_OPERATOR, resource_type: 'extension', resource_ids: [json.extension_id] };
  for (const operation of [
    'createIntegration',
    'disableIntegration',
    'enableIntegration',
    'revokeIntegrationTokens',
    'rotateClientSecret',
  ])
    t.match(await auditOf(operation), [named], operation);
  t.match(await auditOf('revokeToken'), [{ ...named, details: { actor: 'admin-cli', jti: 'tok_audited' } }]);
  t.equal((await auditOf('revokeToken')).length, 1);
});

t.test('a refused command writes neither its change nor an audit record', async (t) => {
  const before = await countAudit();
  await t.rejects(run(integrationCommands.create, { agency, name: 'Refused', scopes: 'external:everything' }), {
    message: /^unknown scopes: external:everything/,
  });
  t.equal(await countAudit(), before);
  t.same(await db.selectFrom('extensions').select('id').where('name', '=', 'Refused').execute(), []);
});

t.test('user create, list and disable: audit records of the operator naming the person', async (t) => {
  const { json } = await run(userCommands.create, {
    agency,
    email: 'Audited.Person@example.com',
    name: 'Audited Person',
    role: 'manager',
  });
  const named = { ...BY_OPERATOR, resource_type: 'user', resource_ids: [json.user_id] };
  t.match(await auditOf('createUser'), [named]);
  await run(userCommands.list, { agency });
  t.match(await auditOf('listUsers'), [{ ...BY_OPERATOR, resource_type: 'user' }]);
  await run(userCommands.disable, { email: 'audited.person@example.com' });
  t.match(await auditOf('disableUser'), [named]);
  const before = await countAudit();
  await t.rejects(
    run(userCommands.create, { agency, email: 'audited.person@example.com', name: 'Twin', role: 'manager' }),
    {
      message: 'a user with the email audited.person@example.com exists already',
    },
  );
  t.equal(await countAudit(), before, 'a refused user writes no audit record');
});

t.test('webhook subscribe, disable and baa: audit records of the operator naming the subscription', async (t) => {
  const { json } = await run(webhookCommands.subscribe, {
    agency,
    url: 'http://127.0.0.1:9/hooks',
    events: 'task.created',
    'allow-http-loopback': true,
  });
  const named = { ...BY_OPERATOR, resource_type: 'webhook_subscription', resource_ids: [json.subscription_id] };
  t.match(await auditOf('createWebhookSubscription'), [named]);
  await run(webhookCommands.disable, { id: json.subscription_id as string });
  t.match(await auditOf('disableWebhookSubscription'), [named]);
  await run(webhookCommands.baa, { id: json.subscription_id as string, signed: true });
  t.match(await auditOf('recordWebhookBaaSigned'), [named]);
});
