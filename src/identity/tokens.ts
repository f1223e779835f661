import { createDecoder, createSigner, createVerifier } from 'fast-jwt';
import type { PhiMode } from '../shared/principal.js';
import { randomId } from '../shared/ids.js';
import type { KeyRing } from './signing-keys.js';

export interface TokenSettings {
  issuer: string;
  audience: string;
  ttlSeconds: number;
}

interface TokenSubject {
  agencyId: string;
  extensionId: string;
  clientId: string;
  phiMode: PhiMode;
  scopes: readonly string[];
}

const TOKEN_TYPE = 'at+jwt';
/** The claims of the access-token profile (RFC 9068: typ at+jwt, client_id; sub is the extension id). */
const REQUIRED_CLAIMS = [
  'iss',
  'aud',
  'sub',
  'client_id',
  'agency_id',
  'phi_mode',
  'scope',
  'jti',
  'iat',
  'exp',
] as const;

type Sign = (payload: Record<string, unknown>) => string;

export class TokenSigner {
  private current: { kid: string; sign: Sign } | undefined;

  constructor(
    private readonly keyRing: KeyRing,
    private readonly settings: TokenSettings,
  ) {}

  async sign(subject: TokenSubject): Promise<{ accessToken: string; expiresIn: number }> {
    const key = await this.keyRing.signingKey();
    const accessToken = this.signerFor(
      key.kid,
      key.privateKeyPem,
    )({
      sub: subject.extensionId,
      client_id: subject.clientId,
      agency_id: subject.agencyId,
      phi_mode: subject.phiMode,
      scope: subject.scopes.join(' '),
      jti: randomId('tok_'),
    });
    return { accessToken, expiresIn: this.settings.ttlSeconds };
  }

  private signerFor(kid: string, privateKeyPem: string): Sign {
    if (this.current?.kid !== kid) {
      const sign = createSigner({
        algorithm: 'ES256',
        key: privateKeyPem,
        kid,
        header: { alg: 'ES256', typ: TOKEN_TYPE },
        iss: this.settings.issuer,
        aud: this.settings.audience,
        expiresIn: this.settings.ttlSeconds * 1000,
      }) as Sign;
      this.current = { kid, sign };
    }
    return this.current.sign;
  }
}

/** Thrown by the key lookup when no trusted key has the token's kid. */
export class UnknownSigningKeyError extends Error {}

export type TokenVerifier = (token: string) => Promise<Record<string, unknown>>;

type Verify = (token: string) => Record<string, unknown>;

/**
 * ES256 only, with the kid resolved in the key ring; every claim of the profile required. One fast-jwt verifier per
 * key, made with the key itself: handed the key per token (an async key callback), fast-jwt parses the PEM again for
 * every token, which cost more than the signature check. Not cached here either: fast-jwt's cache hashes every token
 * with SHA-256 (microseconds per request); the Authenticator caches verified tokens by their exact text instead.
 */
export function createTokenVerifier(keyRing: KeyRing, settings: TokenSettings): TokenVerifier {
  const decodeHeader = createDecoder({ complete: true });
  const verifiers = new Map<string, { pem: string; verify: Verify }>();
  const verifierFor = (kid: string, pem: string): Verify => {
    const known = verifiers.get(kid);
    if (known?.pem === pem) return known.verify;
    const verify = createVerifier({
      key: pem,
      algorithms: ['ES256'],
      checkTyp: TOKEN_TYPE,
      allowedIss: settings.issuer,
      allowedAud: settings.audience,
      requiredClaims: [...REQUIRED_CLAIMS],
    });
    verifiers.set(kid, { pem, verify });
    return verify;
  };
  return async (token) => {
    const { kid } = (decodeHeader(token) as { header: { kid?: unknown } }).header;
    const pem = await keyRing.verificationKey(kid);
    if (!pem) throw new UnknownSigningKeyError();
    return verifierFor(kid as string, pem)(token);
  };
}
