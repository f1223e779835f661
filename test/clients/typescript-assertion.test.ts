import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { createVerifier } from 'fast-jwt';
import t from 'tap';
import { CLIENT_ASSERTION_TYPE, ClientProof, clientAssertion, signingKey } from '../../clients/typescript/src/index.js';
import { readAssertion } from '../../src/identity/client-assertions.js';
import { clientKey } from '../helpers/client-keys.js';

// The TypeScript client's private_key_jwt assertion, read and verified by the service's own checks, without a server.
const TOKEN_URL = 'https://api.agency.example/api/v1/oauth/token';

for (const alg of ['RS384', 'ES384'] as const) {
  t.test(
    `${alg}: the assertion carries the claims SMART asks for and verifies with the registered public key`,
    async (t) => {
      const key = clientKey(alg);
      const now = Date.now();
      const signer = signingKey({
        privateKey: alg === 'RS384' ? key.privateKey : key.privateKey.export({ format: 'jwk' }),
        kid: key.kid,
      });
      t.equal(signer.alg, alg, 'the algorithm inferred from the key type');
      const assertion = clientAssertion('cli_one', TOKEN_URL, signer, now);
      t.match(readAssertion(assertion, 'cli_one', TOKEN_URL, now), { clientId: 'cli_one', kid: key.kid });
      const publicPem = createPublicKey({ key: key.publicJwk, format: 'jwk' }).export({ format: 'pem', type: 'spki' });
      const claims = createVerifier({ key: publicPem.toString(), algorithms: [alg] })(assertion);
      t.match(claims, { iss: 'cli_one', sub: 'cli_one', aud: TOKEN_URL, exp: Math.floor(now / 1000) + 300 });
      t.not(
        claims.jti,
        readAssertion(clientAssertion('cli_one', TOKEN_URL, signer, now), 'cli_one', TOKEN_URL, now).jti,
      );
      const other = createPublicKey(clientKey(alg).privateKey).export({ format: 'pem', type: 'spki' }).toString();
      t.throws(() => createVerifier({ key: other, algorithms: [alg] })(assertion), 'not by another key');
    },
  );
}

t.test('a key the service cannot verify with is refused before anything is signed', async (t) => {
  const rsa = clientKey('RS384');
  t.throws(
    () => signingKey({ privateKey: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey, kid: 'k1' }),
    /RSA \(RS384\) or EC P-384 \(ES384\)/,
  );
  t.throws(() => signingKey({ privateKey: createPublicKey(rsa.privateKey), kid: 'k1' }), /must be a private key/);
  t.throws(() => signingKey({ privateKey: rsa.publicJwk, kid: 'k1' }), 'a public JWK is no private key');
  t.throws(() => signingKey({ privateKey: rsa.privateKey, kid: 'k1', alg: 'ES384' }), /signs with RS384, not ES384/);
  t.throws(() => signingKey({ privateKey: rsa.privateKey, kid: '' }), /kid/);
});

t.test('the proof of each token request attempt: the secret as it is, an assertion signed anew', async (t) => {
  const request = () =>
    new Request(TOKEN_URL, {
      method: 'POST',
      body: JSON.stringify({ grant_type: 'client_credentials', phi_mode: 'phi' }),
    });
  const secret = new ClientProof({ clientId: 'cli_one', clientSecret: 'sec_x', phiMode: 'phi' }, TOKEN_URL);
  t.same(await (await secret.authorize(request())).json(), {
    grant_type: 'client_credentials',
    phi_mode: 'phi',
    client_id: 'cli_one',
    client_secret: 'sec_x',
  });
  const key = clientKey('ES384');
  const proof = new ClientProof(
    { clientId: 'cli_one', privateKey: key.privateKey.export({ format: 'jwk' }), kid: key.kid, phiMode: 'phi' },
    TOKEN_URL,
  );
  const attempts = await Promise.all([proof.authorize(request()), proof.authorize(request())]);
  const bodies = (await Promise.all(attempts.map((attempt) => attempt.json()))) as Array<Record<string, string>>;
  t.match(bodies, [
    { grant_type: 'client_credentials', phi_mode: 'phi', client_assertion_type: CLIENT_ASSERTION_TYPE },
    { client_assertion_type: CLIENT_ASSERTION_TYPE },
  ]);
  const jtis = bodies.map((body) => readAssertion(body.client_assertion, undefined, TOKEN_URL).jti);
  t.not(jtis[0], jtis[1], 'a new jti for each attempt');
  t.notOk('client_id' in bodies[0], 'the assertion names the client');
  t.equal(proof.renews(), false, 'no refusal is cured by signing again');
});
