/** Providers behind small interfaces (email, calendar, CRM), per-user credentials and account connection. */
export type {
  CalendarEvent,
  CalendarProvider,
  EventChanges,
  NewEvent,
  TimeRange,
} from './calendar/calendar-types.ts';
export { calendarFeedRoutes } from './calendar/feed-routes.ts';
export { freeSlots } from './calendar/free-slots.ts';
export { calendarFeed, calendarFeedToken } from './calendar/ics-feed.ts';
export { LocalCalendar } from './calendar/local-calendar.ts';
export { normalizeRrule } from './calendar/recurrence.ts';
export { CredentialStore, CredentialsUnreadableError } from './credentials/credential-store.ts';
export { type ConnectedAccount, PROVIDERS, type Provider } from './credentials/credential-types.ts';
export { credentialSecrets } from './credentials/known-secrets.ts';
export type {
  ContactFields,
  CrmContact,
  CrmDeal,
  CrmNote,
  CrmProvider,
  DealFields,
} from './crm/crm-types.ts';
export { formatAddress, parseAddress, parseAddressList } from './email/email-address.ts';
export type {
  EmailAttachmentContent,
  EmailMessage,
  EmailProvider,
  EmailQuery,
  EmailSummary,
  OutgoingEmail,
} from './email/email-types.ts';
export { imapClient, sendSmtp } from './email/mail-connections.ts';
export { IMAP_SCHEMES, type MailServer, parseMailUrl, SMTP_SCHEMES } from './email/mail-urls.ts';
export { type ParsedMailWithHeaders, parseMailWithHeaders } from './email/parse-message.ts';
export { GOOGLE_SCOPES, googleAuthClient } from './google/google-auth.ts';
export { htmlToReadableText } from './html-text.ts';
export {
  type IntegrationSettings,
  Integrations,
  type Lookup,
  OWNER_USER,
  type UnavailableDomain,
} from './integrations.ts';
export { ProviderError, type ProviderIssue } from './provider-error.ts';

import type { AuthClient } from 'google-auth-library';
import type { Integrations } from './integrations.ts';

/**
 * A google-auth-library client acting for `userId` (OAuth refresh token or service account),
 * or null when the user has no Google account connected. The Drive store takes this client.
 */
export function googleAuthForUser(integrations: Integrations, userId: string): Promise<AuthClient | null> {
  return integrations.googleAuth(userId);
}

/** Skill domains `userId` cannot use now, each with the reason and the `steward connect …` that fixes it. */
export function unavailableDomains(integrations: Integrations, userId: string) {
  return integrations.unavailableDomains(userId);
}
export { type ConnectResult, connectAccount } from './connect-account.ts';
export { providerChecks } from './doctor-check.ts';
export { serviceAccountCredentials } from './google/google-auth.ts';
export { runGoogleOAuthFlow } from './google/oauth-flow.ts';
export { lazyModule } from './lazy-module.ts';
export { webChecks } from './web/doctor-check.ts';
export { type PageText, pageText } from './web/page-text.ts';
export type { Freshness, WebSearchProvider, WebSearchResult } from './web/search-types.ts';
export { WebAccess } from './web/web-access.ts';
export { dailyWebCalls, type WebCallsDay } from './web/web-budget.ts';
