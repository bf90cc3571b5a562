import { FailureThrottle } from '../security/index.ts';

/**
 * Failed logins per address: 5 within 5 minutes throttle the address's wrong tokens (429)
 * until the oldest ages out. A right token always logs in.
 */
export class LoginThrottle extends FailureThrottle {
  constructor(maxFailures = 5, windowMs = 5 * 60 * 1000) {
    super({ maxFailures, windowMs });
  }
}
