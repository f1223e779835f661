import { generateKeyPairSync, randomBytes, type JsonWebKey, type KeyObject } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { integrationCommands } from '../../src/admin/integration.js';
import { loadConfig } from '../../src/config.js';
import type { DB } from '../../src/db/schema.js';
import { testKeyEncryption } from './secrets.js';

/** A client's signing key: the private half in each form a client takes, the public half as registered. */
export interface TestClientKey {
  kid: string;
  alg: 'RS384' | 'ES384';
  privateKey: KeyObject;
  privateJwk: JsonWebKey;
  privatePem: string;
  publicJwk: JsonWebKey;
}

export function testClientKey(alg: 'RS384' | 'ES384'): TestClientKey {
  const { privateKey, publicKey } =
    alg === 'RS384'
      ? generateKeyPairSync('rsa', { modulusLength: 2048 })
      : generateKeyPairSync('ec', { namedCurve: 'P-384' });
  const kid = `${alg.toLowerCase()}-${randomBytes(4).toString('hex')}`;
  return {
    kid,
    alg,
    privateKey,
    privateJwk: privateKey.export({ format: 'jwk' }),
    privatePem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    publicJwk: { ...publicKey.export({ format: 'jwk' }), kid, alg, use: 'sig' },
  };
}

/**
 * An integration of `agencyId` (which must exist) that authenticates with `keys` and has no secret, registered as an
 * administrator does: `integration create … --jwks-file FILE` with their public halves, through the command layer.
 */
export async function createTestKeyIntegration(
  db: Kysely<DB>,
  agencyId: string,
  keys: TestClientKey[],
): Promise<{ clientId: string; agencyId: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'client-keys-'));
  try {
    const file = join(dir, 'jwks.json');
    await writeFile(file, JSON.stringify({ keys: keys.map((key) => key.publicJwk) }));
    const { json } = await integrationCommands.create.run({
      db,
      config: loadConfig({}),
      keyEncryption: () => testKeyEncryption,
      options: {
        agency: agencyId,
        name: 'Test key integration',
        capabilities: 'all',
        'phi-modes': 'no_phi,phi',
        'jwks-file': file,
      },
    });
    return { clientId: json.client_id as string, agencyId };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
