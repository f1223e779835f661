import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { ExtensionPolicy } from '../gateway/principal.js';

interface Entry {
  policy: ExtensionPolicy | undefined;
  loadedAt: number;
}

async function loadPolicy(db: Kysely<DB>, agencyId: string, extensionId: string): Promise<ExtensionPolicy | undefined> {
  const row = await db
    .selectFrom('extensions as e')
    .innerJoin('agencies as a', 'a.id', 'e.agency_id')
    .select([
      'e.status', 'a.status as agency_status', 'e.capabilities', 'e.phi_modes', 'e.rate_limit_per_minute', 'e.daily_quota',
      'e.daily_cost_budget', 'e.tokens_revoked_before',
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

const keyOf = (agencyId: string, extensionId: string) => `${agencyId}\u0000${extensionId}`;

/**
 * Extension policies by (agency, extension), each cached for at most `ttlMs`: the bound within which disabling,
 * revocation and policy changes made anywhere reach this instance. 0 reads the database on every request.
 */
export class ExtensionPolicies {
  /**
   * By agency, then extension: a warm call looks both up with the token's own claim strings, whose hashes V8 keeps,
   * where one joined key would be a new string to build and hash on every request.
   */
  private cache = new Map<string, Map<string, Entry>>();
  private loading = new Map<string, Promise<Entry>>();

  constructor(
    private readonly db: Kysely<DB>,
    private readonly ttlMs: number,
  ) {}

  async get(agencyId: string, extensionId: string): Promise<ExtensionPolicy | undefined> {
    return (this.cached(agencyId, extensionId) ?? (await this.load(agencyId, extensionId))).policy;
  }

  /** The policy while its cached read is fresh (`policy` undefined: no such integration), without I/O; else undefined. */
  cached(agencyId: string, extensionId: string): { policy: ExtensionPolicy | undefined } | undefined {
    const cached = this.cache.get(agencyId)?.get(extensionId);
    return cached && Date.now() - cached.loadedAt < this.ttlMs ? cached : undefined;
  }

  private load(agencyId: string, extensionId: string): Promise<Entry> {
    const key = keyOf(agencyId, extensionId);
    let pending = this.loading.get(key);
    if (!pending) {
      const startedAt = Date.now();
      pending = loadPolicy(this.db, agencyId, extensionId)
        .then((policy) => {
          // Aged from when the read started: a change committed during the read is seen within ttlMs of it.
          const entry = { policy, loadedAt: startedAt };
          if (this.ttlMs > 0) this.cacheFor(agencyId).set(extensionId, entry);
          return entry;
        })
        .finally(() => this.loading.delete(key));
      this.loading.set(key, pending);
    }
    return pending;
  }

  private cacheFor(agencyId: string): Map<string, Entry> {
    let extensions = this.cache.get(agencyId);
    if (!extensions) this.cache.set(agencyId, (extensions = new Map()));
    return extensions;
  }
}
