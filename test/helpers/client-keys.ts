import { createHmac, generateKeyPairSync, randomUUID, sign, type JsonWebKey, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { integrationCommands } from '../../src/admin/integration.js';
import { loadConfig } from '../../src/config.js';
import type { DB } from '../../src/db/schema.js';
import { CLIENT_ASSERTION_TYPE } from '../../src/identity/client-assertions.js';
import { testKeyEncryption } from './secrets.js';

/** A client's signing key as an integration holds it (node:crypto), and the public JWK it registers. */
export interface ClientKey {
  kid: string;
  alg: 'RS384' | 'ES384';
  privateKey: KeyObject;
  publicJwk: JsonWebKey & { kid: string };
}

export function clientKey(alg: ClientKey['alg'], kid = `key-${randomUUID()}`): ClientKey {
  const { privateKey, publicKey } =
    alg === 'RS384'
      ? generateKeyPairSync('rsa', { modulusLength: 2048 })
      : generateKeyPairSync('ec', { namedCurve: 'P-384' });
  return { kid, alg, privateKey, publicJwk: { ...publicKey.export({ format: 'jwk' }), kid, alg, use: 'sig' } };
}

export const jwksOf = (...keys: ClientKey[]) => ({ keys: keys.map((key) => key.publicJwk) });

/** A JWKS file in `dir`, as an administrator hands it to the admin tool. */
export function jwksFile(dir: string, document: unknown): string {
  const path = join(dir, `jwks-${randomUUID()}.json`);
  writeFileSync(path, JSON.stringify(document));
  return path;
}

const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A compact JWS over header and claims, its signature made by `signature` from the signing input. */
function compactJwt(header: object, claims: object, signature: (input: string) => Buffer): string {
  const input = `${part(header)}.${part(claims)}`;
  return `${input}.${signature(input).toString('base64url')}`;
}

/** The signature JWS asks for: PKCS#1 v1.5 for RS384, IEEE P1363 (r || s) for ES384, both over SHA-384. */
function signWith(key: ClientKey): (input: string) => Buffer {
  return (input) =>
    sign(
      'sha384',
      Buffer.from(input),
      key.alg === 'ES384' ? { key: key.privateKey, dsaEncoding: 'ieee-p1363' } : key.privateKey,
    );
}

/** HMAC-SHA256 keyed with the bytes of a public key: the key-confusion forgery. */
export const hmacWith = (secret: string | Buffer) => (input: string) =>
  createHmac('sha256', secret).update(input).digest();

export interface AssertionOptions {
  clientId: string;
  audience: string;
  /** Claims and header members that replace or add to the valid ones. */
  claims?: Record<string, unknown>;
  header?: Record<string, unknown>;
  signature?: (input: string) => Buffer;
}

/** A valid client assertion (SMART Backend Services) signed by `key`, unless the options change it. */
export function clientAssertion(key: ClientKey, options: AssertionOptions): string {
  const now = Math.floor(Date.now() / 1000);
  return compactJwt(
    { alg: key.alg, typ: 'JWT', kid: key.kid, ...options.header },
    {
      iss: options.clientId,
      sub: options.clientId,
      aud: options.audience,
      exp: now + 240,
      iat: now,
      jti: randomUUID(),
      ...options.claims,
    },
    options.signature ?? signWith(key),
  );
}

/** The token request fields of an assertion, beside phi_mode and agency_id as with a secret. */
export function assertionRequestBody(assertion: string, fields: Record<string, string> = {}): Record<string, string> {
  return {
    grant_type: 'client_credentials',
    client_assertion_type: CLIENT_ASSERTION_TYPE,
    client_assertion: assertion,
    phi_mode: 'no_phi',
    ...fields,
  };
}

/**
 * An integration of `agencyId` (which must exist) that authenticates with `keys` and has no secret, registered as an
 * administrator does: `integration create … --jwks-file FILE`, through the command layer.
 */
export async function createTestKeyIntegration(db: Kysely<DB>, agencyId: string, keys: ClientKey[]): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'client-keys-'));
  try {
    const { json } = await integrationCommands.create.run({
      db,
      config: loadConfig({}),
      keyEncryption: () => testKeyEncryption,
      options: {
        agency: agencyId,
        name: 'Test key integration',
        capabilities: 'all',
        'phi-modes': 'no_phi,phi',
        'jwks-file': jwksFile(dir, jwksOf(...keys)),
      },
    });
    return json.client_id as string;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
