import t from 'tap';
import { operations } from '../../src/generated/contract.js';
import { authorize } from '../../src/gateway/access.js';
import type { ExtensionPolicy, Principal } from '../../src/shared/principal.js';
import type { PlatformError } from '../../src/shared/platform-error.js';

const principal = (overrides: Partial<Principal> = {}): Principal => ({
  agencyId: 'a1',
  extensionId: 'e1',
  clientId: 'c1',
  phiMode: 'phi',
  tokenId: 'j1',
  scopes: new Set(Object.values(operations).flatMap((o) => (o.scope ? [o.scope] : []))),
  issuedAt: new Date(),
  expiresAt: new Date(Date.now() + 60_000),
  ...overrides,
});
const policy = (overrides: Partial<ExtensionPolicy> = {}): ExtensionPolicy => ({
  agencyId: 'a1',
  extensionId: 'e1',
  status: 'active',
  capabilities: new Set(Object.values(operations).map((o) => o.capability)),
  phiModes: new Set(['phi', 'no_phi']),
  rateLimitPerMinute: 100,
  dailyQuota: 1000,
  dailyCostBudget: null,
  tokensRevokedBefore: null,
  revokedTokenIds: new Set(),
  ...overrides,
});

function refusal(fn: () => void): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return (err as PlatformError).code;
  }
}

t.test('a fully granted phi session passes every operation', async (t) => {
  for (const op of Object.values(operations))
    t.equal(
      refusal(() => authorize(op, principal(), policy())),
      undefined,
      op.operationId,
    );
});

t.test('the scope comes from x-svc-scope', async (t) => {
  const scopes = new Set(['external:patients:read']);
  t.equal(
    refusal(() => authorize(operations.listRemittances, principal({ scopes }), policy())),
    'PLATFORM_SCOPE_NOT_GRANTED',
  );
  t.equal(
    refusal(() => authorize(operations.listPatients, principal({ scopes }), policy())),
    undefined,
  );
  t.equal(
    refusal(() => authorize(operations.getHealth, principal({ scopes }), policy())),
    undefined,
    'health needs any valid token',
  );
});

t.test('the agency policy must permit the capability; commands need theirs explicitly', async (t) => {
  const readOnly = new Set(
    Object.values(operations)
      .filter((o) => !o.command)
      .map((o) => o.capability),
  );
  t.equal(
    refusal(() => authorize(operations.createTask, principal(), policy({ capabilities: readOnly }))),
    'PLATFORM_POLICY_DENIED',
    'a token alone gives no write permission',
  );
  readOnly.delete('quality.read');
  t.equal(
    refusal(() => authorize(operations.getHhvbpSummary, principal(), policy({ capabilities: readOnly }))),
    'PLATFORM_CAPABILITY_NOT_ALLOWED',
  );
});

t.test('no_phi sessions are refused where x-svc-no-phi is denied', async (t) => {
  const noPhi = principal({ phiMode: 'no_phi' });
  t.equal(
    refusal(() => authorize(operations.listWorkingCollections, noPhi, policy())),
    'PLATFORM_PHI_MODE_DENIED',
  );
  t.equal(
    refusal(() => authorize(operations.listWorkingCollectionRows, noPhi, policy())),
    'PLATFORM_PHI_MODE_DENIED',
  );
  t.equal(
    refusal(() => authorize(operations.listPhysicianOrders, noPhi, policy())),
    undefined,
    'pseudonymized routes serve no_phi',
  );
});

t.test('a PHI mode withdrawn after the token was issued is refused', async (t) => {
  t.equal(
    refusal(() => authorize(operations.listPatients, principal(), policy({ phiModes: new Set(['no_phi']) }))),
    'PLATFORM_PHI_MODE_DENIED',
  );
});
