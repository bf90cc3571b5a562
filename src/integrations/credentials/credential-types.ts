/** The accounts a user can connect; each is one row per user in integration_accounts. */
export const PROVIDERS = ['google', 'email', 'hubspot', 'caldav'] as const;
export type Provider = (typeof PROVIDERS)[number];

export type GoogleCredentials =
  | {
      kind: 'oauth';
      clientId: string;
      clientSecret: string;
      refreshToken: string;
      scopes: string[];
    }
  | {
      kind: 'service_account';
      clientEmail: string;
      privateKey: string;
      /** The Workspace user the service account acts as (domain-wide delegation). */
      subject: string;
    };

export type EmailCredentials = {
  imapUrl: string;
  smtpUrl: string;
  /** `addr` or `Name <addr>`. */
  from: string;
};

export type HubspotCredentials = { accessToken: string; baseUrl?: string };

export type CaldavCredentials = { url: string; username: string; password: string };

export type CredentialsOf = {
  google: GoogleCredentials;
  email: EmailCredentials;
  hubspot: HubspotCredentials;
  caldav: CaldavCredentials;
};

export type ConnectedAccount<P extends Provider = Provider> = {
  provider: P;
  /** What the user sees (an address, a host); never a secret. */
  account: string;
  credentials: CredentialsOf[P];
  /** `env` for the owner's accounts configured by environment / steward.yaml. */
  origin: 'stored' | 'env';
};

/** The secret strings inside `credentials`, for log redaction. */
export function secretsOf(credentials: CredentialsOf[Provider]): string[] {
  const values: Array<string | undefined> = [];
  if ('kind' in credentials) {
    if (credentials.kind === 'oauth') values.push(credentials.clientSecret, credentials.refreshToken);
    else values.push(credentials.privateKey);
  } else if ('imapUrl' in credentials) {
    values.push(urlPassword(credentials.imapUrl), urlPassword(credentials.smtpUrl));
  } else if ('accessToken' in credentials) {
    values.push(credentials.accessToken);
  } else if ('password' in credentials) {
    values.push(credentials.password, urlPassword(credentials.url));
  }
  return values.filter((value): value is string => typeof value === 'string' && value.length >= 4);
}

export function urlPassword(url: string): string | undefined {
  try {
    const password = new URL(url).password;
    return password ? decodeURIComponent(password) : undefined;
  } catch {
    return undefined;
  }
}
