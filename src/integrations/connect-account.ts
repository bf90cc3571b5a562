import type { gmail_v1 } from '@googleapis/gmail/build/v1.js';
import { stewardCommand } from '../config/index.ts';
import type { CredentialsOf, Provider } from './credentials/credential-types.ts';
import { parseAddress } from './email/email-address.ts';
import { IMAP_SCHEMES, parseMailUrl, SMTP_SCHEMES } from './email/mail-urls.ts';
import { googleAuthClient } from './google/google-auth.ts';
import { googleCall } from './google/google-call.ts';
import type { Integrations } from './integrations.ts';
import { networkFailure, ProviderError } from './provider-error.ts';

export type ConnectResult = { ok: true; account: string } | { ok: false; error: string };

/**
 * Checks the credentials against the provider, then stores them for the user. Nothing is
 * stored when the check fails: the error says what the provider answered and what to fix.
 */
export async function connectAccount<P extends Provider>(
  integrations: Integrations,
  settings: { apiUrl?: string; hubspotBaseUrl?: string },
  userId: string,
  provider: P,
  credentials: CredentialsOf[P],
  signal?: AbortSignal,
): Promise<ConnectResult> {
  try {
    const account = await verifyAccount(
      provider,
      credentials as CredentialsOf[Provider],
      settings,
      userId,
      signal,
    );
    await integrations.credentials.save(userId, provider, account, credentials);
    return { ok: true, account };
  } catch (error) {
    if (error instanceof ProviderError) return { ok: false, error: error.message };
    throw error;
  }
}

/**
 * Proves the credentials with one harmless call (a mailbox search and an SMTP login, a contact
 * search, a calendar read, a Gmail profile) and returns the account's name. Throws ProviderError.
 */
export async function verifyAccount(
  provider: Provider,
  credentials: CredentialsOf[Provider],
  settings: { apiUrl?: string; hubspotBaseUrl?: string },
  userId: string,
  signal?: AbortSignal,
): Promise<string> {
  const reconnect = `${stewardCommand()} connect ${provider}${userId === 'local' ? '' : ` --user ${userId}`}`;
  if (provider === 'google') {
    const google = credentials as CredentialsOf['google'];
    const { gmail_v1: gmail } = await import('@googleapis/gmail/build/v1.js');
    const api = new gmail.Gmail({
      auth: await googleAuthClient(google, settings.apiUrl),
      rootUrl: settings.apiUrl ? `${settings.apiUrl.replace(/\/+$/, '')}/` : undefined,
      retry: false,
    } as gmail_v1.Options);
    const profile = await googleCall({ provider: 'Google', reconnect }, () =>
      api.users.getProfile({ userId: 'me' }, { signal }),
    );
    return profile.emailAddress ?? (google.kind === 'service_account' ? google.subject : 'Google account');
  }
  if (provider === 'email') {
    const email = credentials as CredentialsOf['email'];
    const imap = parseMailUrl(email.imapUrl, IMAP_SCHEMES);
    const smtp = parseMailUrl(email.smtpUrl, SMTP_SCHEMES);
    const from = parseAddress(email.from);
    if (!imap)
      throw new ProviderError(
        'IMAP',
        'rejected',
        '--imap must be imap://user:pass@host:port or imaps://… (TLS).',
      );
    if (!smtp)
      throw new ProviderError(
        'SMTP',
        'rejected',
        '--smtp must be smtp://user:pass@host:port or smtps://… (TLS).',
      );
    if (!from) throw new ProviderError('email', 'rejected', '--from must be addr or "Name <addr>".');
    const { ImapEmailProvider } = await import('./email/imap-email.ts');
    const mailbox = new ImapEmailProvider({ imap, smtp, from: email.from, address: from.address, reconnect });
    try {
      await mailbox.search({ limit: 1 }, signal);
    } finally {
      await mailbox.close();
    }
    const { smtpTransport } = await import('./email/mail-connections.ts');
    const transport = smtpTransport(smtp);
    try {
      await transport.verify();
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'EAUTH')
        throw new ProviderError(
          'SMTP',
          'auth',
          `The SMTP server ${smtp.host} refused the login: check the user and password in --smtp.`,
        );
      throw networkFailure({ provider: `the SMTP server ${smtp.host}`, reconnect }, error);
    } finally {
      transport.close();
    }
    return from.address;
  }
  if (provider === 'hubspot') {
    const hubspot = credentials as CredentialsOf['hubspot'];
    const { HubspotCrm } = await import('./crm/hubspot-crm.ts');
    const crm = new HubspotCrm({
      accessToken: hubspot.accessToken,
      basePath: hubspot.baseUrl ?? settings.hubspotBaseUrl,
      reconnect,
    });
    await crm.searchContacts({ limit: 1 }, signal);
    return 'HubSpot';
  }
  const caldav = credentials as CredentialsOf['caldav'];
  const { CaldavCalendar } = await import('./calendar/caldav-calendar.ts');
  const calendar = new CaldavCalendar({ ...caldav, reconnect });
  const now = new Date();
  await calendar.list({ from: now, to: new Date(now.getTime() + 86_400_000) }, signal);
  return `${caldav.username}@${new URL(caldav.url).host}`;
}
