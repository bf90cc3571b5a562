import { readFileSync } from 'node:fs';
import type { AuthClient, OAuth2Client } from 'google-auth-library';
import { ConfigError } from '../../errors.ts';
import type { GoogleCredentials } from '../credentials/credential-types.ts';

/** What a connected Google account may do: mail, calendar, and Drive for the files store. */
export const GOOGLE_SCOPES = [
  'https://www.googleapis.com/auth/gmail.modify',
  'https://www.googleapis.com/auth/calendar',
  'https://www.googleapis.com/auth/drive',
  'openid',
  'email',
];

const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const GOOGLE_AUTH_URL = 'https://accounts.google.com/o/oauth2/v2/auth';

/** Token and consent endpoints: Google's, or under GOOGLE_API_URL when one is set (a proxy or a test server). */
export function googleEndpoints(apiUrl: string | undefined): { tokenUrl: string; authUrl: string } {
  if (!apiUrl) return { tokenUrl: GOOGLE_TOKEN_URL, authUrl: GOOGLE_AUTH_URL };
  const root = apiUrl.replace(/\/+$/, '');
  return { tokenUrl: `${root}/token`, authUrl: `${root}/o/oauth2/v2/auth` };
}

/**
 * A google-auth-library client for stored or configured credentials: OAuth (a refresh token
 * from `steward connect google`) or a service account acting as a Workspace user.
 */
export async function googleAuthClient(credentials: GoogleCredentials, apiUrl?: string): Promise<AuthClient> {
  // Loaded on first use: the library is a large share of start-up memory, and most installs never connect Google.
  const { JWT, OAuth2Client } = await import('google-auth-library');
  const endpoints = googleEndpoints(apiUrl);
  let client: OAuth2Client;
  if (credentials.kind === 'oauth') {
    client = new OAuth2Client({
      clientId: credentials.clientId,
      clientSecret: credentials.clientSecret,
      endpoints: { oauth2TokenUrl: endpoints.tokenUrl, oauth2AuthBaseUrl: endpoints.authUrl },
    });
    client.setCredentials({ refresh_token: credentials.refreshToken });
  } else {
    client = new JWT({
      email: credentials.clientEmail,
      key: credentials.privateKey,
      scopes: GOOGLE_SCOPES.filter((scope) => scope.startsWith('https://')),
      subject: credentials.subject,
    });
  }
  if (apiUrl) {
    // A service account's token request goes to a fixed Google URL; send it where the APIs are.
    client.transporter.interceptors.request.add({
      resolved: async (options) => {
        if (String(options.url) === GOOGLE_TOKEN_URL) options.url = new URL(endpoints.tokenUrl);
        return options;
      },
    });
  }
  return client;
}

/** Reads a service account key file (GOOGLE_APPLICATION_CREDENTIALS) into credentials acting as `subject`. */
export function serviceAccountCredentials(file: string, subject: string): GoogleCredentials {
  let key: { type?: unknown; client_email?: unknown; private_key?: unknown };
  try {
    key = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ConfigError(
      'GOOGLE_APPLICATION_CREDENTIALS',
      `cannot read the service account key ${file} (${(error as Error).message.split('\n')[0]}): download the JSON key of a service account with domain-wide delegation`,
    );
  }
  if (
    key.type !== 'service_account' ||
    typeof key.client_email !== 'string' ||
    typeof key.private_key !== 'string'
  ) {
    throw new ConfigError(
      'GOOGLE_APPLICATION_CREDENTIALS',
      `${file} is not a service account key (needs "type": "service_account", client_email and private_key)`,
    );
  }
  return { kind: 'service_account', clientEmail: key.client_email, privateKey: key.private_key, subject };
}
