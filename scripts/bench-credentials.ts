/**
 * Bearer tokens the bench renews before they expire: seeding the large agency, a long run, or both outlast an access
 * token (TOKEN_TTL_SECONDS, 900 s by default), and a request sent with an expired one measures a 401.
 */

/** What one issue gives: the tokens, and when the first of them expires. */
export interface IssuedTokens {
  tokens: string[];
  expiresAtMs: number;
}

/**
 * Time a renewed token keeps beyond the slice it is renewed for: the last requests of a slice finish after it ends,
 * the token's exp has whole seconds, and the service's clock is not the bench's.
 */
export const RENEWAL_MARGIN_MS = 30_000;

export class BenchTokens {
  private renewing: Promise<void> | undefined;
  /** How many times the tokens were renewed (the first issue not counted). */
  renewals = 0;

  private constructor(
    /** What they are, for the log line of a renewal. */
    readonly what: string,
    private readonly issue: () => Promise<IssuedTokens>,
    private issued: IssuedTokens,
  ) {}

  static async issue(what: string, issue: () => Promise<IssuedTokens>): Promise<BenchTokens> {
    return new BenchTokens(what, issue, await issue());
  }

  /** The first token: the one a "reused token" request sends. */
  get token(): string {
    return this.issued.tokens[0];
  }

  get all(): readonly string[] {
    return this.issued.tokens;
  }

  get expiresAtMs(): number {
    return this.issued.expiresAtMs;
  }

  /** Renews the tokens unless they outlive the next `seconds` by the margin; concurrent callers share one renewal. */
  async freshFor(seconds: number, nowMs = Date.now()): Promise<void> {
    if (this.issued.expiresAtMs - nowMs > seconds * 1000 + RENEWAL_MARGIN_MS) return;
    this.renewing ??= this.renew().finally(() => {
      this.renewing = undefined;
    });
    await this.renewing;
  }

  /** The first token, renewed first if it would expire within the margin. */
  async current(): Promise<string> {
    await this.freshFor(0);
    return this.token;
  }

  private async renew(): Promise<void> {
    const expired = this.issued.expiresAtMs;
    this.issued = await this.issue();
    this.renewals++;
    console.error(
      `  renewed ${this.what} (expiring at ${new Date(expired).toISOString()}; now until ${new Date(this.issued.expiresAtMs).toISOString()})`,
    );
  }
}
