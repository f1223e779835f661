import type { JsonWebKey } from 'node:crypto';
import type { Generated, JSONColumnType } from 'kysely';
import type { PhiMode } from '../../shared/principal.js';

export type ExtensionStatus = 'active' | 'disabled';

interface OfficesTable {
  agency_id: string;
  id: string;
  name: string;
  /** IANA zone, e.g. America/New_York. */
  timezone: string;
  created_at: Generated<Date>;
}

/** The agency's service area: each ZIP is routed to one office. */
interface AgencyServiceZipsTable {
  agency_id: string;
  zip_code: string;
  office_id: string;
}

interface ExtensionsTable {
  agency_id: string;
  id: string;
  name: string;
  status: Generated<ExtensionStatus>;
  scopes: string[];
  capabilities: string[];
  phi_modes: PhiMode[];
  rate_limit_per_minute: number;
  daily_quota: number;
  daily_cost_budget: number | null;
  contract_version: string;
  tokens_revoked_before: Date | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

interface ClientCredentialsTable {
  client_id: string;
  agency_id: string;
  extension_id: string;
  created_at: Generated<Date>;
}

interface ClientSecretsTable {
  id: string;
  agency_id: string;
  client_id: string;
  secret_hash: string;
  created_at: Generated<Date>;
  /** Null while current; a rotated-out secret keeps working until then (the overlap window). */
  expires_at: Date | null;
}

interface RevokedTokensTable {
  jti: string;
  agency_id: string;
  extension_id: string;
  /** The latest the token can expire; the row is useless afterwards. */
  expires_at: Date;
  revoked_at: Generated<Date>;
}

export interface PublicJwk extends JsonWebKey {
  kty: 'EC';
  crv: 'P-256';
  x: string;
  y: string;
  kid: string;
  alg: 'ES256';
  use: 'sig';
}

export interface SigningKeysTable {
  kid: string;
  algorithm: 'ES256';
  /** Plaintext, only in rows written before secrets were sealed, until the next start seals them. */
  private_key_pem: string | null;
  /** The PKCS#8 PEM sealed under the key-encryption key (src/identity/key-encryption.ts). */
  private_key_sealed: string | null;
  public_jwk: JSONColumnType<PublicJwk>;
  created_at: Generated<Date>;
  retired_at: Date | null;
  /** A retired key still verifies tokens until then (their longest lifetime after retirement). */
  verify_until: Date | null;
}

/** A JWK as the platform keeps it: public members only, with the one algorithm it is pinned to. */
export interface ClientPublicJwk extends JsonWebKey {
  kid: string;
  alg: 'RS384' | 'ES384';
  use: 'sig';
}

interface ClientKeySetsTable {
  agency_id: string;
  client_id: string;
  jwks: JSONColumnType<{ keys: ClientPublicJwk[] }>;
  /** Where the keys are fetched from; null when they were registered from a file. */
  jwks_url: string | null;
  /** A plain http:// loopback JWKS URL (development), as webhook subscriptions allow. */
  allow_http_loopback: Generated<boolean>;
  fetched_at: Date | null;
  /** Until when the fetched keys may be used without asking again (the JWKS URL's Cache-Control). */
  fresh_until: Date | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

interface ClientAssertionIdsTable {
  agency_id: string;
  client_id: string;
  jti: string;
  /** The assertion's exp: the id may be used again afterwards, and housekeeping drops the row. */
  expires_at: Date;
}

interface TokenFailuresTable {
  bucket: string;
  window_start: Date;
  count: number;
}

export interface IdentityTables {
  offices: OfficesTable;
  agency_service_zips: AgencyServiceZipsTable;
  extensions: ExtensionsTable;
  client_credentials: ClientCredentialsTable;
  client_secrets: ClientSecretsTable;
  client_key_sets: ClientKeySetsTable;
  client_assertion_ids: ClientAssertionIdsTable;
  revoked_tokens: RevokedTokensTable;
  signing_keys: SigningKeysTable;
  token_failures: TokenFailuresTable;
}
