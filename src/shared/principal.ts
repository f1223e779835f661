export type PhiMode = 'no_phi' | 'phi';

/** The caller of a partition route, established from a verified access token. */
export interface Principal {
  agencyId: string;
  extensionId: string;
  clientId: string;
  phiMode: PhiMode;
  /** Scopes carried by the token (a subset of those granted when it was issued). */
  scopes: ReadonlySet<string>;
  /** The token's jti. */
  tokenId: string;
  issuedAt: Date;
  expiresAt: Date;
  /**
   * Set when the caller presented a governed query token (Bearer qt_…) instead of an access token: it may run this one
   * query with these parameters, read-only, and nothing else. `tokenId` is then the query token's id.
   */
  queryToken?: QueryTokenGrant;
}

interface QueryTokenGrant {
  id: string;
  queryId: string;
  parameters: Readonly<Record<string, unknown>>;
}

/**
 * What an agency administrator granted an integration, as the gateway sees it at request time
 * (cached for a bounded time, so revocation and disabling reach every instance quickly).
 */
export interface ExtensionPolicy {
  agencyId: string;
  extensionId: string;
  status: 'active' | 'disabled';
  /** Capabilities the agency permits (x-svc-capability values); commands need theirs listed explicitly. */
  capabilities: ReadonlySet<string>;
  phiModes: ReadonlySet<PhiMode>;
  rateLimitPerMinute: number;
  dailyQuota: number;
  /** Cost units per UTC day for cost-budgeted operations; null for no budget. */
  dailyCostBudget: number | null;
  /** Tokens issued before this instant are revoked. */
  tokensRevokedBefore: Date | null;
  revokedTokenIds: ReadonlySet<string>;
}
