import type { AuthClient } from 'google-auth-library';
import type { ResolvedConfig } from '../config/index.ts';
import { stewardCommand } from '../config/index.ts';
import type { Queryable } from '../db/index.ts';
import { errorMessage } from '../errors.ts';
import type { CalendarProvider } from './calendar/calendar-types.ts';
import { calendarFeedToken } from './calendar/ics-feed.ts';
import { LocalCalendar } from './calendar/local-calendar.ts';
import { CredentialStore } from './credentials/credential-store.ts';
import type { ConnectedAccount, CredentialsOf, Provider } from './credentials/credential-types.ts';
import { secretsOf } from './credentials/credential-types.ts';
import { rememberSecrets } from './credentials/known-secrets.ts';
import { loadSecretKey, type SecretKey } from './credentials/secret-key.ts';
import type { CrmProvider } from './crm/crm-types.ts';
import { parseAddress } from './email/email-address.ts';
import type { EmailProvider } from './email/email-types.ts';
import { IMAP_SCHEMES, parseMailUrl, SMTP_SCHEMES } from './email/mail-urls.ts';
import { googleAuthClient, serviceAccountCredentials } from './google/google-auth.ts';

/** The user the environment's provider settings belong to. */
export const OWNER_USER = 'local';

export type IntegrationSettings = Pick<
  ResolvedConfig,
  'dataDir' | 'secret_key' | 'email' | 'google' | 'hubspot' | 'caldav' | 'public_url' | 'host' | 'port'
>;

/** A provider for the user, or why there is none and how to connect one. */
export type Lookup<T> = { ok: true; provider: T } | { ok: false; reason: string };

export type UnavailableDomain = { domain: string; reason: string };

export type IntegrationsOptions = {
  database: Queryable;
  config: () => IntegrationSettings;
  timeoutMs?: number;
};

const HOW_TO_CONNECT: Record<string, string> = {
  email:
    'Email is not connected for this user. Connect a mailbox: `steward connect google` (Gmail) or `steward connect email --imap imaps://user:pass@host --smtp smtps://user:pass@host --from addr` (any IMAP/SMTP mailbox), with --user <id> for someone other than the owner.',
  crm: 'The CRM is not connected for this user. Connect HubSpot: `steward connect hubspot --token <private app access token>` (add --user <id> for someone other than the owner).',
};

/**
 * Per-user providers. An account stored by `steward connect` wins; the owner (`local`) falls
 * back to the environment settings. Calendar always has the local calendar to fall back on.
 */
const AVAILABILITY_TTL_MS = 10_000;

export class Integrations {
  readonly credentials: CredentialStore;
  readonly #options: IntegrationsOptions;
  #key: SecretKey | null = null;
  /** Who can use what, asked on every turn and skill call: kept briefly (another instance's connect shows within AVAILABILITY_TTL_MS). */
  readonly #availability = new Map<string, { at: number; value: UnavailableDomain[] }>();

  constructor(options: IntegrationsOptions) {
    this.#options = options;
    this.credentials = new CredentialStore(
      options.database,
      () => {
        this.#key ??= loadSecretKey(options.config());
        return this.#key;
      },
      (userId) => this.#availability.delete(userId),
    );
  }

  /** The user's account of `provider`: stored, or (owner only) from the environment. Null when none. */
  async account<P extends Provider>(userId: string, provider: P): Promise<ConnectedAccount<P> | null> {
    const stored = await this.credentials.load(userId, provider);
    if (stored)
      return { provider, account: stored.account, credentials: stored.credentials, origin: 'stored' };
    if (userId !== OWNER_USER) return null;
    const fromEnv = environmentAccount(this.#options.config(), provider);
    if (fromEnv) rememberSecrets(secretsOf(fromEnv.credentials));
    return fromEnv;
  }

  /** A google-auth-library client for the user's Google account, or null when none is connected. */
  async googleAuth(userId: string): Promise<AuthClient | null> {
    const account = await this.account(userId, 'google');
    return account
      ? await googleAuthClient(account.credentials, this.#options.config().google.api_url)
      : null;
  }

  async email(userId: string): Promise<Lookup<EmailProvider>> {
    try {
      const mailbox = await this.account(userId, 'email');
      if (mailbox) return await this.#imap(mailbox, userId);
      const google = await this.account(userId, 'google');
      if (google) {
        const address = google.account;
        const { GmailEmailProvider } = await import('./email/gmail-email.ts');
        return {
          ok: true,
          provider: new GmailEmailProvider({
            auth: await googleAuthClient(google.credentials, this.#options.config().google.api_url),
            rootUrl: rootUrl(this.#options.config().google.api_url),
            address,
            from:
              userId === OWNER_USER && this.#options.config().email.from
                ? this.#options.config().email.from!
                : address,
            reconnect: reconnectHint('google', google.origin, userId),
          }),
        };
      }
      return { ok: false, reason: HOW_TO_CONNECT.email! };
    } catch (error) {
      return { ok: false, reason: errorMessage(error) };
    }
  }

  /** The user's calendar: Google Calendar, else CalDAV, else the local calendar. */
  async calendar(userId: string): Promise<Lookup<CalendarProvider>> {
    try {
      const google = await this.account(userId, 'google');
      if (google) {
        const { GoogleCalendar } = await import('./calendar/google-calendar.ts');
        return {
          ok: true,
          provider: new GoogleCalendar({
            auth: await googleAuthClient(google.credentials, this.#options.config().google.api_url),
            rootUrl: rootUrl(this.#options.config().google.api_url),
            reconnect: reconnectHint('google', google.origin, userId),
          }),
        };
      }
      const caldav = await this.account(userId, 'caldav');
      if (caldav) {
        const { CaldavCalendar } = await import('./calendar/caldav-calendar.ts');
        return {
          ok: true,
          provider: new CaldavCalendar({
            ...caldav.credentials,
            reconnect: reconnectHint('caldav', caldav.origin, userId),
          }),
        };
      }
    } catch (error) {
      return { ok: false, reason: errorMessage(error) };
    }
    return { ok: true, provider: new LocalCalendar(this.#options.database, userId) };
  }

  async crm(userId: string): Promise<Lookup<CrmProvider>> {
    try {
      const hubspot = await this.account(userId, 'hubspot');
      if (!hubspot) return { ok: false, reason: HOW_TO_CONNECT.crm! };
      const { HubspotCrm } = await import('./crm/hubspot-crm.ts');
      return {
        ok: true,
        provider: new HubspotCrm({
          accessToken: hubspot.credentials.accessToken,
          basePath: hubspot.credentials.baseUrl ?? this.#options.config().hubspot.base_url,
          reconnect: reconnectHint('hubspot', hubspot.origin, userId),
        }),
      };
    } catch (error) {
      return { ok: false, reason: errorMessage(error) };
    }
  }

  /** The user's secret ICS feed URL (`<public or local base URL>/ical/<token>.ics`); `rotate` replaces the token. */
  async calendarFeedUrl(userId: string, options: { rotate?: boolean } = {}): Promise<string> {
    const token = await calendarFeedToken(this.#options.database, userId, options);
    const config = this.#options.config();
    const host = ['0.0.0.0', '::', ''].includes(config.host)
      ? '127.0.0.1'
      : config.host.includes(':')
        ? `[${config.host}]`
        : config.host;
    const base = (config.public_url ?? `http://${host}:${config.port}`).replace(/\/+$/, '');
    return `${base}/ical/${token}.ics`;
  }

  /**
   * Skill domains this user cannot use now, each with the reason and how to connect. The
   * orchestrator leaves them out of the prompt; get_skill and the executor explain them.
   */
  async unavailableDomains(userId: string): Promise<UnavailableDomain[]> {
    const cached = this.#availability.get(userId);
    if (cached && Date.now() - cached.at < AVAILABILITY_TTL_MS) return cached.value;
    const unavailable: UnavailableDomain[] = [];
    const email = await this.#domainAvailability(userId, ['email', 'google'], 'email');
    if (email) unavailable.push(email);
    const crm = await this.#domainAvailability(userId, ['hubspot'], 'crm');
    if (crm) unavailable.push(crm);
    this.#availability.set(userId, { at: Date.now(), value: unavailable });
    return unavailable;
  }

  async #domainAvailability(
    userId: string,
    providers: Provider[],
    domain: string,
  ): Promise<UnavailableDomain | null> {
    const problems: string[] = [];
    for (const provider of providers) {
      try {
        if (await this.account(userId, provider)) return null;
      } catch (error) {
        problems.push(errorMessage(error));
      }
    }
    return { domain, reason: problems.length ? problems.join(' ') : HOW_TO_CONNECT[domain]! };
  }

  async #imap(mailbox: ConnectedAccount<'email'>, userId: string): Promise<Lookup<EmailProvider>> {
    const { imapUrl, smtpUrl, from } = mailbox.credentials;
    const imap = parseMailUrl(imapUrl, IMAP_SCHEMES);
    const smtp = smtpUrl ? parseMailUrl(smtpUrl, SMTP_SCHEMES) : null;
    const reconnect = reconnectHint('email', mailbox.origin, userId);
    if (!imap || (smtpUrl && !smtp))
      return { ok: false, reason: `The mailbox settings are incomplete: ${reconnect}` };
    const { ImapEmailProvider } = await import('./email/imap-email.ts');
    return {
      ok: true,
      provider: new ImapEmailProvider({
        imap,
        smtp,
        from,
        address: parseAddress(from)?.address ?? mailbox.account,
        reconnect,
        timeoutMs: this.#options.timeoutMs,
      }),
    };
  }
}

/** How the user restores access, named in every auth failure. */
export function reconnectHint(provider: Provider, origin: 'stored' | 'env', userId: string): string {
  if (origin === 'env') {
    const settings: Record<Provider, string> = {
      email: 'EMAIL_IMAP_URL / EMAIL_SMTP_URL',
      google: 'GOOGLE_APPLICATION_CREDENTIALS / GOOGLE_IMPERSONATE',
      hubspot: 'HUBSPOT_ACCESS_TOKEN',
      caldav: 'CALDAV_URL',
    };
    return `update ${settings[provider]}, or run ${stewardCommand()} connect ${provider}`;
  }
  return `${stewardCommand()} connect ${provider}${userId === OWNER_USER ? '' : ` --user ${userId}`}`;
}

function rootUrl(apiUrl: string | undefined): string | undefined {
  if (!apiUrl) return undefined;
  return apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/`;
}

/** The owner's account of `provider` configured by environment / steward.yaml, or null. */
export function environmentAccount<P extends Provider>(
  settings: IntegrationSettings,
  provider: P,
): ConnectedAccount<P> | null {
  const make = <Q extends Provider>(account: string, credentials: CredentialsOf[Q]) =>
    ({ provider, account, credentials, origin: 'env' }) as unknown as ConnectedAccount<P>;
  if (provider === 'email' && settings.email.imap_url) {
    const imap = parseMailUrl(settings.email.imap_url, IMAP_SCHEMES);
    const from = settings.email.from ?? (imap?.user.includes('@') ? imap.user : null);
    if (!from) return null;
    return make(parseAddress(from)?.address ?? from, {
      imapUrl: settings.email.imap_url,
      smtpUrl: settings.email.smtp_url ?? '',
      from,
    });
  }
  if (provider === 'google' && settings.google.application_credentials && settings.google.impersonate) {
    return make(
      settings.google.impersonate,
      serviceAccountCredentials(settings.google.application_credentials, settings.google.impersonate),
    );
  }
  if (provider === 'hubspot' && settings.hubspot.access_token) {
    return make('HubSpot (HUBSPOT_ACCESS_TOKEN)', { accessToken: settings.hubspot.access_token });
  }
  if (provider === 'caldav' && settings.caldav.url) {
    const url = new URL(settings.caldav.url);
    const username = decodeURIComponent(url.username);
    const password = decodeURIComponent(url.password);
    url.username = '';
    url.password = '';
    return make(url.host, { url: url.toString(), username, password });
  }
  return null;
}
