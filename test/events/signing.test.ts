import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { deliveryHeaders, newSigningSecret, signingSecretProblem } from '../../src/events/signing.js';
import { verifyDelivery, WebhookVerificationError } from '../../src/events/verify-delivery.js';
import { retryDelayMs } from '../../src/workers/webhooks.js';
import { retryAfterMs } from '../../src/events/receiver-request.js';

// The README's published test vector (Events: webhooks), checked there against openssl as well.
const VECTOR = {
  body: '{"id":"evt_test","type":"task.created","envelope_version":"2026-06-27","contract_version":"2","agency_id":"agency-1","created_at":"2026-06-27T12:00:00.000Z","data":{}}',
  deliveryId: 'whd_0123456789abcdef',
  timestamp: 1782561600,
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  previous: 'whsec_dGhpcyBpcyB0aGUgcmV0aXJpbmcgc2VjcmV0IQ==',
};
const at = VECTOR.timestamp * 1000;
const signed = deliveryHeaders(VECTOR.body, VECTOR.deliveryId, VECTOR.timestamp, {
  current: VECTOR.secret,
  previous: VECTOR.previous,
});

function failure(work: () => unknown): string {
  try {
    work();
    return 'verified';
  } catch (err) {
    if (!(err instanceof WebhookVerificationError)) throw err;
    return err.reason;
  }
}

t.test('the published test vector', async (t) => {
  t.match(signed, {
    'x-svc-payload-sha256': 'sha256=0a20818dd49f311f7c0394dc232ef84bfd63b291037c7ca522c7e81706f6a5fe',
    'x-svc-signature-timestamp': '1782561600',
    'x-svc-delivery-id': VECTOR.deliveryId,
    'x-svc-signature': 'v1=5bc54b11e3c61de94a54581efa50b1ddc154443f8d031d680304b7150cb8cadb',
    'x-svc-signature-previous': 'v1=480611d8b3356f7a8f1b96bc0e9d93954cc073381e536a4d230e49e56e207ba9',
    'webhook-id': VECTOR.deliveryId,
    'webhook-timestamp': '1782561600',
    'webhook-signature':
      'v1,WwlaRgC9NLCv+s4tQAnkFkRDxjp6YCQG6HY02CfoQUM= v1,GJzYDqt0E9Cocc1B5PhFOLx3QGW+BbNSNSv+NfZOTmI=',
  });
  const envelope = verifyDelivery(VECTOR.body, signed, VECTOR.secret, { now: at });
  t.match(envelope, { id: 'evt_test', type: 'task.created', envelope_version: '2026-06-27' });
  t.equal(
    failure(() => verifyDelivery(Buffer.from(VECTOR.body), signed, [VECTOR.secret], { now: at })),
    'verified',
    'a Buffer body too',
  );
});

t.test('verifyDelivery refuses what does not match, and says which check failed', async (t) => {
  const withoutPrevious = deliveryHeaders(VECTOR.body, VECTOR.deliveryId, VECTOR.timestamp, { current: VECTOR.secret });
  t.equal(
    failure(() => verifyDelivery(VECTOR.body.replace('agency-1', 'agency-2'), signed, VECTOR.secret, { now: at })),
    'payload_hash_mismatch',
    'tampered body',
  );
  const rehashed = {
    ...withoutPrevious,
    'x-svc-payload-sha256': deliveryHeaders(`${VECTOR.body} `, VECTOR.deliveryId, VECTOR.timestamp, {
      current: VECTOR.secret,
    })['x-svc-payload-sha256'],
  };
  t.equal(
    failure(() => verifyDelivery(`${VECTOR.body} `, rehashed, VECTOR.secret, { now: at })),
    'signature_mismatch',
    'tampered body with a recomputed hash',
  );
  t.equal(
    failure(() => verifyDelivery(VECTOR.body, signed, VECTOR.secret, { now: at + 301_000 })),
    'timestamp_out_of_tolerance',
    'stale',
  );
  t.equal(
    failure(() => verifyDelivery(VECTOR.body, signed, VECTOR.secret, { now: at - 301_000 })),
    'timestamp_out_of_tolerance',
    'from the future',
  );
  t.equal(
    failure(() => verifyDelivery(VECTOR.body, signed, VECTOR.secret, { now: at + 299_000 })),
    'verified',
    'within the tolerance',
  );
  t.equal(
    failure(() => verifyDelivery(VECTOR.body, signed, VECTOR.secret, { now: at + 3_000_000, toleranceSeconds: 3600 })),
    'verified',
    'a wider tolerance',
  );
  t.equal(
    failure(() => verifyDelivery(VECTOR.body, signed, newSigningSecret(), { now: at })),
    'signature_mismatch',
    'wrong secret',
  );
  t.equal(
    failure(() =>
      verifyDelivery(VECTOR.body, { ...signed, 'x-svc-delivery-id': 'whd_other' }, VECTOR.secret, { now: at }),
    ),
    'signature_mismatch',
    'another delivery id',
  );
  t.equal(
    failure(() =>
      verifyDelivery(
        VECTOR.body,
        { ...signed, 'x-svc-signature-timestamp': String(VECTOR.timestamp + 1) },
        VECTOR.secret,
        { now: at },
      ),
    ),
    'signature_mismatch',
    'another timestamp',
  );
  t.equal(
    failure(() =>
      verifyDelivery(VECTOR.body, { ...signed, 'x-svc-signature-timestamp': '1e9' }, VECTOR.secret, { now: at }),
    ),
    'timestamp_out_of_tolerance',
    'not a number',
  );
  const { 'x-svc-signature': _dropped, ...unsigned } = signed;
  t.equal(
    failure(() => verifyDelivery(VECTOR.body, unsigned, VECTOR.secret, { now: at })),
    'missing_header',
  );
  const notJson = 'not json';
  const signedText = deliveryHeaders(notJson, VECTOR.deliveryId, VECTOR.timestamp, { current: VECTOR.secret });
  t.equal(
    failure(() => verifyDelivery(notJson, signedText, VECTOR.secret, { now: at })),
    'malformed_body',
  );
});

t.test('during a rotation either secret verifies, through either header', async (t) => {
  t.equal(
    failure(() => verifyDelivery(VECTOR.body, signed, VECTOR.previous, { now: at })),
    'verified',
    'the retiring secret, by x-svc-signature-previous',
  );
  t.equal(
    failure(() => verifyDelivery(VECTOR.body, signed, [VECTOR.previous, VECTOR.secret], { now: at })),
    'verified',
  );
  const fetchStyle = new Headers(signed);
  t.equal(
    failure(() => verifyDelivery(VECTOR.body, fetchStyle, VECTOR.previous, { now: at })),
    'verified',
    'a fetch Headers object',
  );
  const upper = Object.fromEntries(Object.entries(signed).map(([k, v]) => [k.toUpperCase(), v]));
  t.equal(
    failure(() => verifyDelivery(VECTOR.body, upper, VECTOR.secret, { now: at })),
    'verified',
    'header names in any case',
  );
});

t.test('the standardwebhooks library verifies the same headers unchanged, with either secret', async (t) => {
  const now = Math.floor(Date.now() / 1000);
  const headers = deliveryHeaders(VECTOR.body, VECTOR.deliveryId, now, {
    current: VECTOR.secret,
    previous: VECTOR.previous,
  });
  t.same(new Webhook(VECTOR.secret).verify(VECTOR.body, headers), JSON.parse(VECTOR.body));
  t.same(new Webhook(VECTOR.previous).verify(VECTOR.body, headers), JSON.parse(VECTOR.body));
  t.throws(() => new Webhook(newSigningSecret()).verify(VECTOR.body, headers), 'a third secret does not');
  t.throws(() => new Webhook(VECTOR.secret).verify(`${VECTOR.body} `, headers), 'nor a changed body');
});

t.test('signing secrets are whsec_ and 24 to 64 bytes, so both schemes can use them', async (t) => {
  const secret = newSigningSecret();
  t.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  t.equal(signingSecretProblem(secret), undefined);
  t.equal(signingSecretProblem(VECTOR.secret), undefined);
  for (const bad of [
    'hunter2',
    'whsec_',
    'whsec_c2hvcnQ=',
    `whsec_${Buffer.alloc(65).toString('base64')}`,
    'whsec_not base64!',
  ])
    t.type(signingSecretProblem(bad), 'string', bad);
});

t.test(
  'retries: full jitter under each delay of the schedule, Retry-After when longer, none past the last',
  async (t) => {
    const delays = [5_000, 300_000];
    t.equal(
      retryDelayMs(1, delays, undefined, () => 0.5),
      2_500,
    );
    t.equal(
      retryDelayMs(2, delays, undefined, () => 0.999),
      299_700,
    );
    t.equal(
      retryDelayMs(1, delays, undefined, () => 0),
      0,
      'may be immediate',
    );
    t.equal(
      retryDelayMs(1, delays, 60_000, () => 0.5),
      60_000,
      'Retry-After longer than the jittered wait',
    );
    t.equal(
      retryDelayMs(1, delays, 1_000, () => 0.5),
      2_500,
      'Retry-After shorter: the schedule',
    );
    t.equal(
      retryDelayMs(1, delays, 10 * 86_400_000, () => 0.5),
      86_400_000,
      'Retry-After capped at a day',
    );
    t.equal(retryDelayMs(3, delays, undefined), null, 'exhausted');
    t.equal(retryAfterMs('120'), 120_000);
    t.equal(retryAfterMs('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('Wed, 21 Oct 2015 07:27:00 GMT')), 60_000);
    t.equal(retryAfterMs('soon'), undefined);
    t.equal(retryAfterMs(undefined), undefined);
  },
);
