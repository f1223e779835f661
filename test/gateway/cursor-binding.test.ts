import t from 'tap';
import { randomUUID } from 'node:crypto';
import { operations, type OperationDefinition } from '../../src/generated/contract.js';
import { buildTestApp, signIn, type SignedInApi } from '../helpers/app.js';
import { seededAgency } from '../helpers/clinical.js';
import type { Query } from '../helpers/list-walk.js';

/** Every list that pages by cursor, from the route table: a list added later is covered without a change here. */
const cursorLists = (Object.values(operations) as OperationDefinition[]).filter(
  (op) => op.method === 'GET' && op.queryParameters.some((p) => p.name === 'cursor'),
);

const api = await buildTestApp();
const agencyA = await seededAgency(api);
const otherExtension = await signIn(api, { phiMode: 'phi', integration: { agencyId: agencyA.agencyId } });
const agencyBPhi = await signIn(api, { phiMode: 'phi' });
const agencyBNoPhi = await signIn(api, {
  phiMode: 'no_phi',
  integration: { agencyId: agencyBPhi.integration.agencyId },
});

/** Lists whose items a session creates itself (its own query tokens) get two each, so that a first page has a cursor. */
for (const session of [agencyA.phi, agencyA.noPhi]) {
  for (const name of ['Census book', 'Orders book']) {
    await session.request({
      method: 'POST',
      url: '/api/v1/ext/query-tokens',
      headers: { 'idempotency-key': `cursor-binding-${randomUUID()}` },
      payload: { name, query_id: 'active_census' },
    });
  }
}

/** A list under a resource is walked under one with more than one item: a collection shared agency-wide, a demo payment. */
const sharedCollection = (await agencyA.phi.request({ method: 'GET', url: '/api/v1/ext/working-collections' }))
  .json()
  .data.find((c: { visibility: string; row_count: number }) => c.visibility === 'agency' && c.row_count > 1).id;
const demoPayment = (await agencyA.phi.request({ method: 'GET', url: '/api/v1/ext/remittances' }))
  .json()
  .data.find((r: { claim_count: number }) => r.claim_count > 1).id;
const parentOf: Partial<Record<string, string>> = {
  listWorkingCollectionRows: sharedCollection,
  listRemittanceAllocations: demoPayment,
};
const urlOf = (op: OperationDefinition) => op.path.replace('{id}', parentOf[op.operationId] ?? '');
/** listRemittanceAllocations: an unknown payment's allocations are an empty page, not a 404. */
const EMPTY_WHEN_UNKNOWN = new Set(['listRemittanceAllocations']);
const get = (session: SignedInApi, op: OperationDefinition, query: Query) =>
  session.request({ method: 'GET', url: urlOf(op), query });

async function nextCursor(session: SignedInApi, op: OperationDefinition, query: Query = {}): Promise<string> {
  const res = await get(session, op, { ...query, limit: '1' });
  if (res.statusCode !== 200 || typeof res.json().meta.next_cursor !== 'string')
    throw new Error(`${op.operationId} gave no cursor: ${res.body}`);
  return res.json().meta.next_cursor;
}

/** An answer's status and error, without what differs on every call (a success has no error). */
function answerOf(res: { statusCode: number; body: string }) {
  const { correlationId, ...error } = JSON.parse(res.body).error ?? {};
  return { status: res.statusCode, error };
}

/** A query with one more filter than none: the list's first enumerated filter at its first value, else its first boolean one. */
function aFilter(op: OperationDefinition): Query | undefined {
  for (const { name, schema } of op.queryParameters) if ('enum' in schema) return { [name]: String(schema.enum[0]) };
  for (const { name, schema } of op.queryParameters)
    if ('type' in schema && schema.type === 'boolean') return { [name]: 'true' };
  t.same(
    op.queryParameters.map((p) => p.name),
    ['limit', 'offset', 'cursor'],
    `${op.operationId} has no filter at all`,
  );
  return undefined;
}

t.ok(cursorLists.length >= 4, 'patients, referrals, intakes and visits page by cursor');

for (const op of cursorLists) {
  t.test(
    `${op.operationId}: a cursor works only for the caller, route, filters and PHI mode it was issued to`,
    async (t) => {
      const noPhi = op.noPhi !== 'denied';
      const cursor = await nextCursor(agencyA.phi, op);
      const noPhiCursor = noPhi ? await nextCursor(agencyA.noPhi, op) : undefined;
      const tampered = cursor.slice(0, 20) + (cursor[20] === 'A' ? 'B' : 'A') + cursor.slice(21);
      const tamperedAnswer = answerOf(await get(agencyA.phi, op, { cursor: tampered }));
      t.match(tamperedAnswer, { status: 400, error: { code: 'PLATFORM_INVALID_INPUT', details: { field: 'cursor' } } });

      const refused = async (session: SignedInApi, query: Query, why: string, route = op) => {
        t.same(answerOf(await get(session, route, query)), tamperedAnswer, `${why}: the answer to a tampered cursor`);
      };
      if (op.path.includes('{id}')) {
        const unknown = answerOf(await get(agencyBPhi, op, {}));
        t.equal(
          unknown.status,
          EMPTY_WHEN_UNKNOWN.has(op.operationId) ? 200 : 404,
          "another agency's resource is unknown there",
        );
        t.same(
          answerOf(await get(agencyBPhi, op, { cursor })),
          unknown,
          'another agency (phi): as unknown, cursor or not',
        );
      } else {
        await refused(agencyBPhi, { cursor }, 'another agency (phi)');
      }
      await refused(otherExtension, { cursor }, 'another extension of the same agency');
      if (noPhiCursor) {
        if (op.path.includes('{id}'))
          t.same(
            answerOf(await get(agencyBNoPhi, op, { cursor })),
            answerOf(await get(agencyBNoPhi, op, {})),
            'another agency (no_phi): as unknown, cursor or not',
          );
        else await refused(agencyBNoPhi, { cursor }, 'another agency (no_phi)');
        await refused(agencyA.noPhi, { cursor }, 'a phi cursor in a no_phi session');
        await refused(agencyA.phi, { cursor: noPhiCursor }, 'a no_phi cursor in a phi session');
      }
      const filter = aFilter(op);
      if (filter) await refused(agencyA.phi, { ...filter, cursor }, 'another filter set');
      for (const other of cursorLists.filter((o) => o !== op))
        await refused(agencyA.phi, { cursor }, `on ${other.operationId}`, other);

      t.equal((await get(agencyA.phi, op, { cursor })).statusCode, 200, 'the same binding continues');
      t.equal((await get(agencyA.phi, op, { cursor, limit: '3' })).statusCode, 200, 'with another page size too');
      if (noPhiCursor)
        t.equal((await get(agencyA.noPhi, op, { cursor: noPhiCursor })).statusCode, 200, 'a no_phi walk continues');
    },
  );
}
