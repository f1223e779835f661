import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { FailureLimiter, type Admission, type FailureLimits, type FailureSource } from '../failure-limits.js';
import type { PlatformError } from '../../shared/platform-error.js';

/** Failed sign-ins allowed per account (email) and per address over 15 minutes. */
export const SIGN_IN_FAILURE_LIMITS: FailureLimits = { perSubject: 5, perAddress: 20, windowSeconds: 900 };

/**
 * The MCP sign-in's limits. An email is no secret, so an account over its limit is not locked: it is refused, before
 * any hash, only from addresses that have failed within the window (the guesser's), while an address without
 * failures still gets its try, so the person signs in from their own. Past the limit a guesser thus needs a fresh
 * address per guess, and its wrong one answers 429 like the rest. Unknown emails are counted alike, so a 429 does not
 * tell whether an email has an account.
 */
export class SignInFailureLimiter extends FailureLimiter {
  constructor(db: Kysely<DB>, limits: FailureLimits = SIGN_IN_FAILURE_LIMITS) {
    super(db, {
      limits,
      kinds: { address: 'sign-in-address', subject: 'sign-in-account' },
      refusals: { what: 'Too many failed sign-ins', subject: 'for this account.' },
    });
  }

  override async admit(source: FailureSource): Promise<Admission> {
    const admission = await super.admit(source);
    if (admission.subjectLimited && admission.addressFailed) throw await this.subjectRefusal(source);
    return admission;
  }
}

/** What a sign-in page says of a sign-in refused before or after its password was checked: when to try again. */
export function signInRefusal(err: PlatformError): string {
  const seconds = Number(err.details?.retry_after_seconds ?? 1);
  if (err.code !== 'PLATFORM_RATE_LIMITED')
    return `Too many sign-ins are being checked right now: try again in ${seconds} seconds.`;
  const minutes = Math.ceil(seconds / 60);
  return `Too many attempts: try again in ${minutes} ${minutes === 1 ? 'minute' : 'minutes'}.`;
}
