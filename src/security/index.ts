export { type AuditOptions, auditConfiguration } from './audit.ts';
export { deepFindings } from './audit-deep.ts';
export { weakSecretReason } from './audit-settings.ts';
export { clientAddress } from './client-address.ts';
export { type Advisory, type AdvisoryList, bundledAdvisories, satisfies } from './dependency-advisories.ts';
export { FailureThrottle } from './failure-throttle.ts';
export { type Finding, isSerious, SEVERITIES, type Severity } from './finding.ts';
export { addressRange, allowedAddress, isBlockedAddress } from './ip-ranges.ts';
export { InboundRateLimiter, RateLimitedError } from './rate-limit.ts';
export {
  createSsrfGuard,
  type ResolveAll,
  SsrfBlockedError,
  type SsrfGuard,
  type UrlCheck,
} from './ssrf-guard.ts';
