import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { ClientPublicJwk } from '../db/tables/identity.js';
import type { CommandStore } from '../db/tenant-store.js';

/**
 * The public keys an integration signs its client assertions with (private_key_jwt): registered from a JWKS file,
 * or fetched from its JWKS URL, cached as that answer's Cache-Control allows and fetched again, at most once a
 * minute, when an assertion names a kid the cached set lacks (so a client rotates its key without telling us).
 */

/** The algorithms SMART Backend Services asks for, each pinned to the key type that signs with it. */
export const ASSERTION_ALGORITHMS = ['RS384', 'ES384'] as const;
export type AssertionAlgorithm = (typeof ASSERTION_ALGORITHMS)[number];

const MAX_KEYS = 20;
const MIN_RSA_BITS = 2048;
/** Members that only a private or symmetric key has (RFC 7518 6.2.2, 6.3.2, 6.4.1). */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
/** The public members kept of each key type; anything else (x5c, key_ops...) is dropped. */
const PUBLIC_MEMBERS: Record<string, string[]> = { RSA: ['n', 'e'], EC: ['crv', 'x', 'y'] };
const REFETCH_INTERVAL_SECONDS = 60;
/** When the JWKS URL's answer says nothing about caching. */
const DEFAULT_MAX_AGE_SECONDS = 300;
const MAX_MAX_AGE_SECONDS = 86_400;

export class KeySetRefused extends Error {}

type Jwk = Record<string, unknown>;

function pinnedAlgorithm(jwk: Jwk, at: string): AssertionAlgorithm {
  if (jwk.kty === 'RSA') return 'RS384';
  if (jwk.kty === 'EC' && jwk.crv === 'P-384') return 'ES384';
  if (jwk.kty === 'EC')
    throw new KeySetRefused(`${at}.crv: only P-384 EC keys (ES384) are accepted, got ${JSON.stringify(jwk.crv)}`);
  throw new KeySetRefused(
    `${at}.kty: only RSA (RS384) and EC P-384 (ES384) keys are accepted, got ${JSON.stringify(jwk.kty)}`,
  );
}

function checkedKey(jwk: unknown, at: string): ClientPublicJwk {
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk))
    throw new KeySetRefused(`${at}: must be a JSON Web Key object`);
  const key = jwk as Jwk;
  const secret = PRIVATE_MEMBERS.find((member) => member in key);
  if (secret) throw new KeySetRefused(`${at}.${secret}: a private key member; register the public key only`);
  const alg = pinnedAlgorithm(key, at);
  if (typeof key.kid !== 'string' || key.kid === '' || key.kid.length > 256)
    throw new KeySetRefused(`${at}.kid: every key needs a kid (1 to 256 characters)`);
  if (key.alg !== undefined && key.alg !== alg)
    throw new KeySetRefused(`${at}.alg: a ${key.kty} key here signs with ${alg} only, got ${JSON.stringify(key.alg)}`);
  if (key.use !== undefined && key.use !== 'sig')
    throw new KeySetRefused(`${at}.use: must be sig, got ${JSON.stringify(key.use)}`);
  const kept = Object.fromEntries([
    ['kty', key.kty],
    ...PUBLIC_MEMBERS[key.kty as string].map((m) => [m, key[m]]),
  ]) as JsonWebKey;
  let bits: number | undefined;
  try {
    bits = createPublicKey({ key: kept, format: 'jwk' }).asymmetricKeyDetails?.modulusLength;
  } catch (err) {
    throw new KeySetRefused(`${at}: not a usable ${key.kty} public key (${(err as Error).message})`);
  }
  if (key.kty === 'RSA' && (bits ?? 0) < MIN_RSA_BITS)
    throw new KeySetRefused(`${at}.n: RSA keys must have at least ${MIN_RSA_BITS} bits, got ${bits}`);
  return { ...kept, kid: key.kid, alg, use: 'sig' };
}

/** A JWKS of public signing keys as the platform keeps it; refuses with the offending member named (keys[0].d). */
export function publicKeySet(document: unknown): { keys: ClientPublicJwk[] } {
  const keys = (document as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.length === 0)
    throw new KeySetRefused('keys: a JWKS is an object whose "keys" is a non-empty array');
  if (keys.length > MAX_KEYS) throw new KeySetRefused(`keys: at most ${MAX_KEYS} keys`);
  const checked = keys.map((key, i) => checkedKey(key, `keys[${i}]`));
  const repeated = checked.find((key, i) => checked.findIndex((other) => other.kid === key.kid) !== i);
  if (repeated) throw new KeySetRefused(`keys: the kid "${repeated.kid}" is used twice`);
  return { keys: checked };
}

/** A JWKS URL's answer, fetched with the webhook receivers' address checks (src/events/receiver-request.ts). */
export interface FetchedDocument {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  complete: boolean;
}

/** Fetches a JWKS URL; throws with the reason when the URL or the address it resolves to is refused or nothing answers. */
export type DocumentFetcher = (url: string, allowHttpLoopback: boolean) => Promise<FetchedDocument>;

/** How long an answer may be used, from its Cache-Control (RFC 9111 5.2.2): no-store and no-cache mean not at all. */
function maxAgeSeconds(cacheControl: string | string[] | undefined): number {
  const directives = [cacheControl ?? []]
    .flat()
    .join(',')
    .toLowerCase()
    .split(',')
    .map((d) => d.trim());
  if (directives.some((d) => d === 'no-store' || d === 'no-cache')) return 0;
  const maxAge = directives.map((d) => /^max-age=(\d+)$/.exec(d)).find(Boolean);
  return maxAge ? Math.min(Number(maxAge[1]), MAX_MAX_AGE_SECONDS) : DEFAULT_MAX_AGE_SECONDS;
}

/** The public keys at a JWKS URL and how long they may be cached; refuses, with the reason, anything else. */
async function fetchKeySet(
  fetchDocument: DocumentFetcher,
  url: string,
  allowHttpLoopback: boolean,
): Promise<{ jwks: { keys: ClientPublicJwk[] }; maxAgeSeconds: number }> {
  let answer: FetchedDocument;
  try {
    answer = await fetchDocument(url, allowHttpLoopback);
  } catch (err) {
    throw new KeySetRefused(`the JWKS URL was not fetched: ${(err as Error).message}`);
  }
  if (answer.status !== 200) throw new KeySetRefused(`the JWKS URL answered ${answer.status}, not 200`);
  if (!answer.complete) throw new KeySetRefused(`the JWKS URL's answer is larger than ${answer.body.length} bytes`);
  let document: unknown;
  try {
    document = JSON.parse(answer.body.toString('utf8'));
  } catch {
    throw new KeySetRefused('the JWKS URL did not answer JSON');
  }
  return { jwks: publicKeySet(document), maxAgeSeconds: maxAgeSeconds(answer.headers['cache-control']) };
}

interface KeySetRow {
  agency_id: string;
  client_id: string;
  jwks: { keys: ClientPublicJwk[] };
  jwks_url: string | null;
  allow_http_loopback: boolean;
  fresh_until: Date | null;
}

/** Told when a JWKS URL could not be fetched again (the keys fetched before stay in use). */
export type RefetchFailed = (clientId: string, reason: string) => void;

/** The keys of each integration as the token endpoint needs them, shared by every process through the database. */
export class ClientKeySets {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly fetchDocument: DocumentFetcher,
    private readonly refetchFailed: RefetchFailed = () => {},
  ) {}

  /** The client's key named `kid`, with the agency the client belongs to; undefined when it has none by that kid. */
  async keyFor(clientId: string, kid: string): Promise<{ agencyId: string; key: ClientPublicJwk } | undefined> {
    let row = await this.db
      .selectFrom('client_key_sets')
      .select(['agency_id', 'client_id', 'jwks', 'jwks_url', 'allow_http_loopback', 'fresh_until'])
      .where('client_id', '=', clientId)
      .executeTakeFirst();
    if (!row) return undefined;
    const find = (r: KeySetRow) => r.jwks.keys.find((key) => key.kid === kid);
    const stale = row.fresh_until === null || row.fresh_until.getTime() <= Date.now();
    if (row.jwks_url && (stale || !find(row))) row = (await this.refetch(row)) ?? row;
    const key = find(row);
    return key && { agencyId: row.agency_id, key };
  }

  /**
   * Fetches the JWKS URL again unless some process did within the last minute: the claim is one conditional update,
   * so a stream of unknown kids makes at most one request a minute whatever the number of processes.
   */
  private async refetch(row: KeySetRow): Promise<KeySetRow | undefined> {
    const claimed = await this.db
      .updateTable('client_key_sets')
      .set({ fetched_at: sql`now()` })
      .where('agency_id', '=', row.agency_id)
      .where('client_id', '=', row.client_id)
      .where('jwks_url', '=', row.jwks_url)
      .where((eb) =>
        eb.or([
          eb('fetched_at', 'is', null),
          eb('fetched_at', '<=', sql<Date>`now() - make_interval(secs => ${REFETCH_INTERVAL_SECONDS})`),
        ]),
      )
      .returning('client_id')
      .executeTakeFirst();
    if (!claimed) return undefined;
    try {
      const { jwks, maxAgeSeconds } = await fetchKeySet(this.fetchDocument, row.jwks_url!, row.allow_http_loopback);
      await this.db
        .updateTable('client_key_sets')
        .set({
          jwks: JSON.stringify(jwks),
          fresh_until: sql`now() + make_interval(secs => ${maxAgeSeconds})`,
          updated_at: sql`now()`,
        })
        .where('agency_id', '=', row.agency_id)
        .where('client_id', '=', row.client_id)
        .where('jwks_url', '=', row.jwks_url)
        .execute();
      return { ...row, jwks };
    } catch (err) {
      if (!(err instanceof KeySetRefused)) throw err;
      this.refetchFailed(row.client_id, err.message);
      return undefined;
    }
  }
}

export type KeySource = { jwks: unknown } | { jwksUrl: string; allowHttpLoopback: boolean };

/** Keys checked (and fetched, for a URL) before anything is written, so a refused source changes nothing. */
export interface CheckedKeySet {
  jwks: { keys: ClientPublicJwk[] };
  jwksUrl: string | null;
  allowHttpLoopback: boolean;
  maxAgeSeconds: number | null;
}

export async function checkKeySource(fetchDocument: DocumentFetcher, source: KeySource): Promise<CheckedKeySet> {
  if ('jwks' in source)
    return { jwks: publicKeySet(source.jwks), jwksUrl: null, allowHttpLoopback: false, maxAgeSeconds: null };
  const fetched = await fetchKeySet(fetchDocument, source.jwksUrl, source.allowHttpLoopback);
  return { ...fetched, jwksUrl: source.jwksUrl, allowHttpLoopback: source.allowHttpLoopback };
}

/** Registers or replaces an integration's keys. */
export async function storeKeySet(store: CommandStore, clientId: string, checked: CheckedKeySet): Promise<void> {
  // The store inserts plain values: the fetch is timed by this process's clock, which the fetch itself was.
  const now = Date.now();
  const values = {
    jwks: JSON.stringify(checked.jwks),
    jwks_url: checked.jwksUrl,
    allow_http_loopback: checked.allowHttpLoopback,
    fetched_at: checked.jwksUrl ? new Date(now) : null,
    fresh_until: checked.maxAgeSeconds === null ? null : new Date(now + checked.maxAgeSeconds * 1000),
  };
  await store
    .insertInto('client_key_sets')
    .values({ client_id: clientId, ...values })
    .onConflict((oc) => oc.columns(['agency_id', 'client_id']).doUpdateSet({ ...values, updated_at: sql`now()` }))
    .execute();
}
