import t from 'tap';
import { BenchTokens, RENEWAL_MARGIN_MS, type IssuedTokens } from '../../scripts/bench-credentials.js';
import { errorCodeOf } from '../../scripts/bench-load.js';

const MINUTE_MS = 60_000;

/** Tokens "t1", "t2"… each issue, valid for `lifetimeMs` from the issue. */
async function counting(lifetimeMs: number) {
  let issued = 0;
  const issue = async (): Promise<IssuedTokens> => ({
    tokens: [`t${++issued}`],
    expiresAtMs: Date.now() + lifetimeMs,
  });
  return BenchTokens.issue('test tokens', issue);
}

t.test('tokens that outlive the slice and the margin are kept', async (t) => {
  const tokens = await counting(15 * MINUTE_MS);
  await tokens.freshFor(60);
  t.equal(tokens.token, 't1');
  t.equal(tokens.renewals, 0);
});

t.test('tokens that would expire during the slice, or within the margin after it, are renewed first', async (t) => {
  const tokens = await counting(15 * MINUTE_MS);
  const slice = 10;
  await tokens.freshFor(slice, tokens.expiresAtMs - slice * 1000 - RENEWAL_MARGIN_MS + 1);
  t.equal(tokens.token, 't2');
  t.equal(tokens.renewals, 1);
});

t.test('an expired token is renewed before the pre-flight request reads it', async (t) => {
  const tokens = await counting(-1);
  t.equal(await tokens.current(), 't2');
});

t.test('callers that find the tokens stale together share one renewal', async (t) => {
  const tokens = await counting(RENEWAL_MARGIN_MS);
  await Promise.all([tokens.freshFor(5), tokens.freshFor(5), tokens.freshFor(5)]);
  t.equal(tokens.renewals, 1);
  t.equal(tokens.token, 't2');
});

t.test('a refusal is counted by the error code of either error shape, or what the body is', async (t) => {
  t.equal(errorCodeOf('{"error":{"code":"PLATFORM_TOKEN_EXPIRED","message":"x"}}'), 'PLATFORM_TOKEN_EXPIRED');
  t.equal(errorCodeOf('{"error":"invalid_token","code":"PLATFORM_INVALID_TOKEN"}'), 'PLATFORM_INVALID_TOKEN');
  t.equal(errorCodeOf('{"error":"invalid_token"}'), 'invalid_token', "the baseline's refusal");
  t.equal(errorCodeOf('{"message":"x"}'), 'no error code');
  t.equal(errorCodeOf('<html>'), 'not JSON');
});
