import t from 'tap';
import { operations, type OperationDefinition, type Validator } from '../../src/generated/contract.js';
import { buildSignedInApp } from '../helpers/app.js';

const api = await buildSignedInApp();
const takingBodies = (Object.values(operations) as OperationDefinition[]).filter(
  (op) => op.requestContentTypes.length > 0,
);
// A real value for each path parameter, so that nothing but the content type is wrong.
const PATH_VALUES: Record<string, string> = { queryId: 'active_census', id: 'tsk_0000000000000000' };
const urlOf = (op: OperationDefinition) => op.url.replace(/:(\w+)/g, (_, name: string) => PATH_VALUES[name]);

t.test('every operation that takes a body answers a content type it does not list with its declared 415', async (t) => {
  t.ok(
    takingBodies.map((op) => op.operationId).includes('runQuery') &&
      takingBodies.map((op) => op.operationId).includes('createQueryToken'),
  );
  for (const op of takingBodies) {
    const declared = (op.responses as Record<string, Validator>)['415'];
    t.ok(declared, `${op.operationId} declares 415`);
    for (const [type, payload] of [
      ['text/plain', 'name=census'],
      ['application/xml', '<query><limit>10</limit></query>'],
      ['application/json; charset=latin1', '{}'],
    ]) {
      const res = await api.request({
        method: op.method,
        url: urlOf(op),
        headers: { 'content-type': type, 'idempotency-key': `media-${op.operationId}` },
        payload,
      });
      t.equal(res.statusCode, 415, `${op.operationId} ${type}`);
      const body = res.json();
      t.ok(
        declared?.(body),
        `${op.operationId} ${type}: the body is the declared 415 ${JSON.stringify(declared?.errors ?? [])}`,
      );
      t.match(
        body,
        { error: 'unsupported_media_type', code: 'PLATFORM_INVALID_REQUEST', request_id: res.headers['x-request-id'] },
        `${op.operationId} ${type}`,
      );
    }
  }
});

t.test('a command refused with 415 recorded nothing: its idempotency key then runs the JSON request', async (t) => {
  const headers = { 'idempotency-key': 'media-createQueryToken' };
  const refused = await api.request({
    method: 'POST',
    url: '/api/v1/ext/query-tokens',
    headers: { ...headers, 'content-type': 'text/plain' },
    payload: 'census',
  });
  t.equal(refused.statusCode, 415);
  const listed = await api.request({ method: 'GET', url: '/api/v1/ext/query-tokens' });
  t.equal(listed.json().meta.total, 0, 'no token was created');
  const created = await api.request({
    method: 'POST',
    url: '/api/v1/ext/query-tokens',
    headers,
    payload: { name: 'Census by office', query_id: 'active_census' },
  });
  t.equal(created.statusCode, 200);
  t.notOk(created.headers['idempotent-replayed'], 'not a replay of the refusal');
  t.match(created.json().data, { id: /^qtk_/, token: /^qt_/ });
});
