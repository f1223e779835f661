import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { IntegrationMap } from '../shared/integration-map.js';
import type { ExtensionPolicy } from '../shared/principal.js';

interface Entry {
  policy: ExtensionPolicy | undefined;
  loadedAt: number;
}

async function loadPolicy(db: Kysely<DB>, agencyId: string, extensionId: string): Promise<ExtensionPolicy | undefined> {
  const row = await db
    .selectFrom('extensions as e')
    .innerJoin('agencies as a', 'a.id', 'e.agency_id')
    .select([
      'e.status',
      'a.status as agency_status',
      'e.capabilities',
      'e.phi_modes',
      'e.rate_limit_per_minute',
      'e.daily_quota',
      'e.daily_cost_budget',
      'e.tokens_revoked_before',
    ])
    .select((eb) =>
      sql<string[]>`array(${eb
        .selectFrom('revoked_tokens as r')
        .select('r.jti')
        .whereRef('r.agency_id', '=', 'e.agency_id')
        .whereRef('r.extension_id', '=', 'e.id')
        .where('r.expires_at', '>', sql<Date>`now()`)})`.as('revoked_jtis'),
    )
    .where('e.agency_id', '=', agencyId)
    .where('e.id', '=', extensionId)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    agencyId,
    extensionId,
    // A disabled agency disables every one of its integrations.
    status: row.status === 'active' && row.agency_status === 'active' ? 'active' : 'disabled',
    capabilities: new Set(row.capabilities),
    phiModes: new Set(row.phi_modes),
    rateLimitPerMinute: row.rate_limit_per_minute,
    dailyQuota: row.daily_quota,
    dailyCostBudget: row.daily_cost_budget,
    tokensRevokedBefore: row.tokens_revoked_before,
    revokedTokenIds: new Set(row.revoked_jtis),
  };
}

/**
 * Extension policies by (agency, extension), each cached for at most `ttlMs`: the bound within which disabling,
 * revocation and policy changes made anywhere reach this instance. 0 reads the database on every request.
 */
export class ExtensionPolicies {
  private cache = new IntegrationMap<Entry>();
  private loading = new IntegrationMap<Promise<Entry>>();

  constructor(
    private readonly db: Kysely<DB>,
    private readonly ttlMs: number,
  ) {}

  async get(agencyId: string, extensionId: string): Promise<ExtensionPolicy | undefined> {
    return (this.cached(agencyId, extensionId) ?? (await this.load(agencyId, extensionId))).policy;
  }

  /** The policy while its cached read is fresh (`policy` undefined: no such integration), without I/O; else undefined. */
  cached(
    agencyId: string,
    extensionId: string,
    nowMs: number = Date.now(),
  ): { policy: ExtensionPolicy | undefined } | undefined {
    const cached = this.cache.get(agencyId, extensionId);
    return cached && nowMs - cached.loadedAt < this.ttlMs ? cached : undefined;
  }

  private load(agencyId: string, extensionId: string): Promise<Entry> {
    let pending = this.loading.get(agencyId, extensionId);
    if (!pending) {
      const startedAt = Date.now();
      pending = loadPolicy(this.db, agencyId, extensionId)
        .then((policy) => {
          // Aged from when the read started: a change committed during the read is seen within ttlMs of it.
          const entry = { policy, loadedAt: startedAt };
          if (this.ttlMs > 0) this.cache.set(agencyId, extensionId, entry);
          return entry;
        })
        .finally(() => this.loading.delete(agencyId, extensionId));
      this.loading.set(agencyId, extensionId, pending);
    }
    return pending;
  }
}
