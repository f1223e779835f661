import t from 'tap';
import { readFileSync } from 'node:fs';
import {
  isAddressedByHandle,
  isSentAsHandle,
  operationRefusal,
  queryRunRefusal,
  queryTokenRefusal,
  type OperationRules,
  type QueryRules,
} from '../../src/domain/access-policy.js';
import { QueryRegistry } from '../../src/resources/queries/query-registry.js';
import { GOVERNED_QUERIES } from '../../src/resources/queries/governed-queries.js';
import { PSEUDONYM_PREFIX, type PseudonymKind } from '../../src/shared/ids.js';
import type { ExtensionPolicy, PhiMode, Principal } from '../../src/shared/principal.js';

const MODES: readonly PhiMode[] = ['phi', 'no_phi'];
const ALLOWED = 'allowed';

/** Every operation of the contract, its rules read from openapi.json's x-svc marks (not from the generated table). */
const contract = JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8'));
const OPERATIONS: OperationRules[] = Object.values(
  contract.paths as Record<string, Record<string, Record<string, unknown>>>,
).flatMap((item) =>
  Object.values(item)
    .filter((op) => typeof op === 'object' && op !== null && 'operationId' in op)
    .map((op) => ({
      operationId: op.operationId as string,
      scope: (op['x-svc-scope'] as string | undefined) ?? null,
      capability: op['x-svc-capability'] as string,
      command: op['x-svc-command'] === true,
      noPhi: op['x-svc-no-phi'] as string,
      queryTokens: op['x-svc-query-token'] === true,
    })),
);

/** Every governed query, as the registry's catalog states its rules. */
const QUERIES: QueryRules[] = new QueryRegistry(GOVERNED_QUERIES).catalog().map((q) => ({
  id: q.id,
  scope: q.scope,
  capability: q.capability,
  ...(q.no_phi === 'denied' ? { noPhiDenied: true as const } : {}),
}));

const ALL_SCOPES = [...OPERATIONS.flatMap((o) => (o.scope ? [o.scope] : [])), ...QUERIES.map((q) => q.scope)];
const ALL_CAPABILITIES = [...OPERATIONS.map((o) => o.capability), ...QUERIES.map((q) => q.capability)];

const principal = (phiMode: PhiMode, overrides: Partial<Principal> = {}): Principal => ({
  agencyId: 'a1',
  extensionId: 'e1',
  clientId: 'c1',
  phiMode,
  tokenId: 'j1',
  scopes: new Set(ALL_SCOPES),
  issuedAt: new Date(0),
  expiresAt: new Date(60_000),
  ...overrides,
});
const policy = (overrides: Partial<ExtensionPolicy> = {}): ExtensionPolicy => ({
  agencyId: 'a1',
  extensionId: 'e1',
  status: 'active',
  capabilities: new Set(ALL_CAPABILITIES),
  phiModes: new Set(MODES),
  rateLimitPerMinute: 100,
  dailyQuota: 1000,
  dailyCostBudget: null,
  tokensRevokedBefore: null,
  revokedTokenIds: new Set(),
  ...overrides,
});
const without = <T>(set: Iterable<T>, item: T) => new Set([...set].filter((x) => x !== item));
const outcome = (refusal: Error | undefined) => (refusal ? (refusal as Error & { code: string }).code : ALLOWED);
const queryToken = (queryId: string) => ({ id: 'qtk_1', queryId, parameters: {} });

t.test('the lists are the contract and the registry', async (t) => {
  t.ok(
    OPERATIONS.length >= 28 && OPERATIONS.every((o) => o.operationId && o.capability && o.noPhi),
    `${OPERATIONS.length} operations, each with its marks`,
  );
  t.ok(QUERIES.length >= 7, `${QUERIES.length} queries`);
});

t.test('every operation, in both PHI modes', async (t) => {
  for (const op of OPERATIONS) {
    for (const mode of MODES) {
      const name = `${op.operationId} ${mode}`;
      const phiDenied = mode === 'no_phi' && op.noPhi === 'denied';
      const rows: [string, Principal, ExtensionPolicy, string][] = [
        ['fully granted', principal(mode), policy(), phiDenied ? 'PLATFORM_PHI_MODE_DENIED' : ALLOWED],
        [
          'without its scope',
          principal(mode, { scopes: op.scope ? without(ALL_SCOPES, op.scope) : new Set() }),
          policy(),
          op.scope ? 'PLATFORM_SCOPE_NOT_GRANTED' : phiDenied ? 'PLATFORM_PHI_MODE_DENIED' : ALLOWED,
        ],
        [
          'without its capability',
          principal(mode),
          policy({ capabilities: without(ALL_CAPABILITIES, op.capability) }),
          op.command ? 'PLATFORM_POLICY_DENIED' : 'PLATFORM_CAPABILITY_NOT_ALLOWED',
        ],
        [
          'its PHI mode withdrawn',
          principal(mode),
          policy({ phiModes: without(MODES, mode) }),
          'PLATFORM_PHI_MODE_DENIED',
        ],
        [
          'with a query token',
          principal(mode, { queryToken: queryToken('active_census') }),
          policy(),
          !op.queryTokens ? 'PLATFORM_INVALID_CREDENTIAL' : phiDenied ? 'PLATFORM_PHI_MODE_DENIED' : ALLOWED,
        ],
      ];
      for (const [caller, p, pol, expected] of rows)
        t.equal(outcome(operationRefusal(op, p, pol)), expected, `${name}: ${caller}`);
    }
  }
});

t.test('every governed query run, in both PHI modes', async (t) => {
  for (const query of QUERIES) {
    for (const mode of MODES) {
      const name = `${query.id} ${mode}`;
      const phiDenied = mode === 'no_phi' && query.noPhiDenied === true;
      const served = phiDenied ? 'PLATFORM_PHI_MODE_DENIED' : ALLOWED;
      const other = QUERIES.find((q) => q.id !== query.id)!.id;
      const rows: [string, Principal, ExtensionPolicy, string][] = [
        ['fully granted', principal(mode), policy(), served],
        [
          'without its scope',
          principal(mode, { scopes: without(ALL_SCOPES, query.scope) }),
          policy(),
          'PLATFORM_QUERY_NOT_ALLOWED',
        ],
        [
          'without its capability',
          principal(mode),
          policy({ capabilities: without(ALL_CAPABILITIES, query.capability) }),
          'PLATFORM_QUERY_NOT_ALLOWED',
        ],
        [
          "its own query token (its creator's scopes)",
          principal(mode, { scopes: new Set(), queryToken: queryToken(query.id) }),
          policy(),
          served,
        ],
        [
          "another query's token",
          principal(mode, { queryToken: queryToken(other) }),
          policy(),
          'PLATFORM_QUERY_NOT_ALLOWED',
        ],
      ];
      for (const [caller, p, pol, expected] of rows)
        t.equal(outcome(queryRunRefusal(query, p, pol)), expected, `${name}: ${caller}`);
    }
  }
});

t.test('every governed query token, made from both PHI modes, for both PHI modes', async (t) => {
  for (const query of QUERIES) {
    for (const session of MODES) {
      for (const token of MODES) {
        const name = `${query.id} ${token} token from a ${session} session`;
        const expected =
          token === 'phi' && session !== 'phi'
            ? 'PLATFORM_PHI_MODE_DENIED'
            : token === 'no_phi' && query.noPhiDenied
              ? 'PLATFORM_PHI_MODE_DENIED'
              : ALLOWED;
        t.equal(
          outcome(queryTokenRefusal(query, principal(session), policy(), token)),
          expected,
          `${name}: fully granted`,
        );
        t.equal(
          outcome(queryTokenRefusal(query, principal(session), policy({ phiModes: new Set(['no_phi']) }), token)),
          token === 'phi' ? 'PLATFORM_PHI_MODE_DENIED' : expected,
          `${name}: phi not permitted`,
        );
        // The session and policy that make a token must be able to run its query, whatever the token's PHI mode.
        for (const scope of ['external:queries:run', query.scope]) {
          t.equal(
            outcome(
              queryTokenRefusal(query, principal(session, { scopes: without(ALL_SCOPES, scope) }), policy(), token),
            ),
            'PLATFORM_QUERY_NOT_ALLOWED',
            `${name}: without ${scope}`,
          );
        }
        for (const capability of ['queries.run', query.capability]) {
          t.equal(
            outcome(
              queryTokenRefusal(
                query,
                principal(session),
                policy({ capabilities: without(ALL_CAPABILITIES, capability) }),
                token,
              ),
            ),
            'PLATFORM_QUERY_NOT_ALLOWED',
            `${name}: without ${capability}`,
          );
        }
      }
    }
  }
});

t.test('addressing: a no_phi session sends handles, a phi session ids, for every kind', async (t) => {
  for (const kind of Object.keys(PSEUDONYM_PREFIX) as PseudonymKind[]) {
    const handle = `${PSEUDONYM_PREFIX[kind]}0000000001AB`;
    const id = 'c0a8012e-0000-4000-8000-000000000001';
    const addressed = (sent: string, mode: PhiMode) => {
      try {
        return isAddressedByHandle(kind, sent, mode, 'id') ? 'handle' : 'id';
      } catch (err) {
        return (err as Error & { code: string }).code;
      }
    };
    t.equal(addressed(handle, 'no_phi'), 'handle', `${kind}: no_phi handle`);
    t.equal(addressed(id, 'no_phi'), 'PLATFORM_INVALID_INPUT', `${kind}: no_phi id`);
    t.equal(addressed(id, 'phi'), 'id', `${kind}: phi id`);
    t.equal(addressed(handle, 'phi'), 'PLATFORM_INVALID_INPUT', `${kind}: phi handle`);
  }
});

t.test(
  'a value sent where the contract marks a handle: resolved in no_phi, as sent in phi; orders told apart',
  async (t) => {
    const id = 'c0a8012e-0000-4000-8000-000000000001';
    const table: Record<PseudonymKind, Record<PhiMode, { handle: string; id: string }>> = {
      patient: { no_phi: { handle: 'resolve', id: 'resolve' }, phi: { handle: 'as sent', id: 'as sent' } },
      physician: { no_phi: { handle: 'resolve', id: 'resolve' }, phi: { handle: 'as sent', id: 'as sent' } },
      physician_order: {
        no_phi: { handle: 'resolve', id: 'PLATFORM_INVALID_INPUT' },
        phi: { handle: 'PLATFORM_INVALID_INPUT', id: 'as sent' },
      },
      claim: { no_phi: { handle: 'resolve', id: 'resolve' }, phi: { handle: 'as sent', id: 'as sent' } },
      payer_claim: { no_phi: { handle: 'resolve', id: 'resolve' }, phi: { handle: 'as sent', id: 'as sent' } },
      member: { no_phi: { handle: 'resolve', id: 'resolve' }, phi: { handle: 'as sent', id: 'as sent' } },
    };
    for (const [kind, modes] of Object.entries(table) as [PseudonymKind, (typeof table)[PseudonymKind]][]) {
      for (const [mode, expected] of Object.entries(modes) as [PhiMode, { handle: string; id: string }][]) {
        const sent = { handle: `${PSEUDONYM_PREFIX[kind]}0000000001AB`, id };
        for (const form of ['handle', 'id'] as const) {
          let outcome: string;
          try {
            outcome = isSentAsHandle(kind, sent[form], mode, 'id') ? 'resolve' : 'as sent';
          } catch (err) {
            outcome = (err as Error & { code: string }).code;
          }
          t.equal(outcome, expected[form], `${kind}, ${mode} session, sends its ${form}`);
        }
      }
    }
  },
);
