import { randomUUID } from 'node:crypto';
import t from 'tap';
import pino from 'pino';
import {
  handleParameters,
  operations,
  type HandleParameter,
  type OperationDefinition,
  type OperationId,
} from '../../src/generated/contract.js';
import { Gateway } from '../../src/gateway/core/gateway.js';
import { callOperation, type DirectCallInput } from '../../src/gateway/core/direct-call.js';
import type { Handler, Handlers } from '../../src/gateway/core/handler.js';
import { createServices } from '../../src/services.js';
import { loadConfig } from '../../src/config.js';
import { TenantPseudonyms } from '../../src/db/pseudonyms.js';
import { resourceNotFound } from '../../src/resources/handler.js';
import type { PhiMode } from '../../src/shared/principal.js';
import { testDatabase } from '../helpers/database.js';
import { testKeyEncryption } from '../helpers/secrets.js';
import { createTestIntegration, testPrincipal } from '../helpers/identity.js';

const { db } = await testDatabase();
const log = pino({ enabled: false });
const services = createServices(loadConfig({}), db, testKeyEncryption, log);
t.teardown(() => services.close());

/** Every operation answers with what its handler was given for the parameter under test, as a not-found naming it. */
let current: HandleParameter;
let received: unknown;
const valueAt = (input: Record<string, unknown>, { in: where, field }: HandleParameter) =>
  field
    .split('.')
    .reduce<unknown>(
      (node, name) => (node as Record<string, unknown>)?.[name],
      input[where === 'path' ? 'params' : where],
    );
const echo: Handler<OperationId> = (ctx) => {
  received = valueAt(ctx as unknown as Record<string, unknown>, current);
  throw resourceNotFound('resource', String(received));
};
const handlers = Object.fromEntries(Object.keys(operations).map((id) => [id, echo])) as unknown as Handlers;
const gateway = new Gateway(handlers, { ...services, db, handlerTimeoutMs: 10_000 }, log);

const integration = await createTestIntegration(db);
const ALL_SCOPES = (Object.values(operations) as OperationDefinition[]).flatMap((o) => (o.scope ? [o.scope] : []));

const principal = (phiMode: PhiMode) => testPrincipal(integration, phiMode, ALL_SCOPES);

/** The rest of a valid body, for operations that take a handle in theirs. */
const BODIES: Partial<Record<OperationId, Record<string, unknown>>> = { createTask: { title: 'Call the patient' } };

/** A nested value at the dotted path, with the sibling its `when` asks for. */
function nested(path: string[], value: string, when: HandleParameter['when']): Record<string, unknown> {
  const [name, ...rest] = path;
  if (rest.length > 0) return { [name]: nested(rest, value, when) };
  return { ...(when ? { [when.property]: when.values[0] } : {}), [name]: value };
}

function call(operationId: OperationId, parameter: HandleParameter, value: string, phiMode: PhiMode) {
  const input: Record<string, unknown> = {};
  if (parameter.in === 'path') input.params = { [parameter.field]: value };
  if (parameter.in === 'query') input.query = { [parameter.field]: value };
  if (parameter.in === 'body')
    input.body = { ...BODIES[operationId], ...nested(parameter.field.split('.'), value, parameter.when) };
  current = parameter;
  received = undefined;
  const command = operations[operationId].command;
  return callOperation(gateway, {
    operationId,
    principal: principal(phiMode),
    ...input,
    ...(command ? { idempotencyKey: `key-${randomUUID()}` } : {}),
  } as DirectCallInput);
}

const marked = Object.entries(handleParameters) as [OperationId, readonly HandleParameter[]][];

t.test('the contract marks handle parameters, and the route table lists them', async (t) => {
  t.ok(marked.length > 0);
  t.same(
    handleParameters.getPatient,
    [{ in: 'path', field: 'id', kind: 'patient' }],
    "a patient's path id, as openapi.json marks it",
  );
});

t.test(
  'every marked value a no_phi session sends reaches the handler as the real id, and refusals name the handle',
  async (t) => {
    const pseudonyms = new TenantPseudonyms(db, integration.agencyId);
    for (const [operationId, parameters] of marked) {
      for (const parameter of parameters) {
        const where = `${operationId} ${parameter.in} ${parameter.field}`;
        const realId = `real_${parameter.kind}_${randomUUID().slice(0, 8)}`;
        const handle = await pseudonyms.handleFor(parameter.kind, realId);
        const answer = await call(operationId, parameter, handle, 'no_phi');
        t.equal(received, realId, `${where}: resolved before the handler`);
        t.match(answer.body, { error: { code: 'PLATFORM_RESOURCE_NOT_FOUND', details: { id: handle } } }, where);
        t.notMatch(JSON.stringify(answer.body), realId, `${where}: the refusal never names the real id`);

        const unknown = `${handle.slice(0, 3)}0000000000ZZ`;
        t.match(
          (await call(operationId, parameter, unknown, 'no_phi')).body,
          { error: { code: 'PLATFORM_PSEUDONYM_UNRESOLVED', details: { handle: unknown } } },
          `${where}: an unknown handle`,
        );
        t.equal(received, undefined, `${where}: the handler does not run`);

        await call(operationId, parameter, realId, 'phi');
        t.equal(received, realId, `${where}: a phi session's id reaches the handler as sent`);
      }
    }
  },
);
