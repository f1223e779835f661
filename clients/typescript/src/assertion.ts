import { createPrivateKey, KeyObject, randomUUID, sign, type JsonWebKey } from 'node:crypto';

/**
 * The client assertion of private_key_jwt (RFC 7523) as SMART Backend Services profiles it: a JWT signed with a key
 * whose public half is registered for the client, instead of a shared secret.
 */

export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** The service refuses an assertion whose exp is further ahead. */
export const MAX_ASSERTION_LIFETIME_SECONDS = 300;

/** The two algorithms the service accepts, each signed by one key type. */
export type AssertionAlgorithm = 'RS384' | 'ES384';

export interface AssertionKey {
  /** An RSA or EC P-384 private key, as a node KeyObject or a private JWK. */
  privateKey: KeyObject | JsonWebKey;
  /** The kid its public key is registered under. */
  kid: string;
  /** Default: RS384 for an RSA key, ES384 for an EC P-384 key. */
  alg?: AssertionAlgorithm;
}

/** A key ready to sign: the private KeyObject, its kid and its one algorithm. */
export interface SigningKey {
  key: KeyObject;
  kid: string;
  alg: AssertionAlgorithm;
}

function algorithmOf(key: KeyObject): AssertionAlgorithm | undefined {
  if (key.asymmetricKeyType === 'rsa') return 'RS384';
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'secp384r1') return 'ES384';
  return undefined;
}

/** Checks the key before anything is sent: a public key, another key type or an alg the key cannot sign with throw. */
export function signingKey({ privateKey, kid, alg }: AssertionKey): SigningKey {
  const key = privateKey instanceof KeyObject ? privateKey : createPrivateKey({ key: privateKey, format: 'jwk' });
  if (key.type !== 'private')
    throw new TypeError('privateKey must be a private key: its public half is the registered one');
  const inferred = algorithmOf(key);
  if (!inferred) throw new TypeError('privateKey must be an RSA (RS384) or EC P-384 (ES384) key');
  if (alg !== undefined && alg !== inferred)
    throw new TypeError(`an ${key.asymmetricKeyType} key signs with ${inferred}, not ${alg}`);
  if (!kid) throw new TypeError('kid must name the registered key');
  return { key, kid, alg: inferred };
}

const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

/**
 * A JWT with iss = sub = the client id, aud = the token endpoint's URL it is posted to, exp at most five minutes
 * ahead and a new jti (the service accepts each jti once). `now` is in milliseconds.
 */
export function clientAssertion(clientId: string, tokenUrl: string, signer: SigningKey, now = Date.now()): string {
  const issuedAt = Math.floor(now / 1000);
  const header = { alg: signer.alg, kid: signer.kid, typ: 'JWT' };
  const claims = {
    iss: clientId,
    sub: clientId,
    aud: tokenUrl,
    iat: issuedAt,
    exp: issuedAt + MAX_ASSERTION_LIFETIME_SECONDS,
    jti: randomUUID(),
  };
  const signingInput = `${base64url(header)}.${base64url(claims)}`;
  // JWS wants an ECDSA signature as the raw r || s (RFC 7518 3.4), not node's default DER.
  const key = signer.alg === 'ES384' ? { key: signer.key, dsaEncoding: 'ieee-p1363' as const } : signer.key;
  return `${signingInput}.${sign('sha384', Buffer.from(signingInput), key).toString('base64url')}`;
}
