import { readFileSync } from 'node:fs';
import { importPKCS8, SignJWT } from 'jose';
import { StewardError } from '../../errors.ts';

const DEFAULT_TOKEN_URI = 'https://oauth2.googleapis.com/token';

type ServiceAccount = { client_email: string; private_key: string; token_uri?: string };

/**
 * OAuth access tokens for a Google service account (the JWT-bearer grant, signed with the
 * key from its JSON file), cached until a minute before they expire. The file's `token_uri`
 * is honoured.
 */
export class ServiceAccountTokens {
  readonly #path: string;
  readonly #scope: string;
  readonly #fetch: typeof fetch;
  #account: ServiceAccount | null = null;
  #cached: { token: string; expiresAt: number } | null = null;

  constructor(options: { path: string; scope: string; fetch?: typeof fetch }) {
    this.#path = options.path;
    this.#scope = options.scope;
    this.#fetch = options.fetch ?? globalThis.fetch;
  }

  #load(): ServiceAccount {
    if (this.#account) return this.#account;
    let parsed: Partial<ServiceAccount>;
    try {
      parsed = JSON.parse(readFileSync(this.#path, 'utf8')) as Partial<ServiceAccount>;
    } catch (error) {
      throw new StewardError(
        'service_account_unreadable',
        `GOOGLE_CHAT_SERVICE_ACCOUNT: cannot read ${this.#path} as JSON`,
        { cause: error },
      );
    }
    if (!parsed.client_email || !parsed.private_key) {
      throw new StewardError(
        'service_account_invalid',
        `GOOGLE_CHAT_SERVICE_ACCOUNT: ${this.#path} lacks client_email or private_key (download a JSON key for the service account)`,
      );
    }
    this.#account = parsed as ServiceAccount;
    return this.#account;
  }

  /**
   * A cached or fresh access token. Throws StewardError: `service_account_token_unavailable`
   * when the endpoint is down or throttling (worth another try), other codes when the key is
   * unreadable or refused; a network failure is thrown as is.
   */
  async token(signal?: AbortSignal): Promise<string> {
    if (this.#cached && this.#cached.expiresAt > Date.now() + 60_000) return this.#cached.token;
    const account = this.#load();
    const tokenUri = account.token_uri ?? DEFAULT_TOKEN_URI;
    const key = await importPKCS8(account.private_key, 'RS256');
    const now = Math.floor(Date.now() / 1000);
    const assertion = await new SignJWT({ scope: this.#scope })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
      .setIssuer(account.client_email)
      .setAudience(tokenUri)
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .sign(key);
    const response = await this.#fetch(tokenUri, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }),
      signal,
    });
    const body = (await response.json().catch(() => ({}))) as {
      access_token?: string;
      expires_in?: number;
      error?: string;
    };
    if (response.status === 429 || response.status >= 500) {
      // The endpoint is down or throttling (often an HTML page from its gateway): try again later.
      throw new StewardError(
        'service_account_token_unavailable',
        `the token endpoint answered HTTP ${response.status}${body.error ? ` (${body.error})` : ''}`,
      );
    }
    if (!response.ok || !body.access_token) {
      throw new StewardError(
        'service_account_token',
        `the token endpoint refused the service account: ${body.error ?? `HTTP ${response.status}`}`,
      );
    }
    this.#cached = { token: body.access_token, expiresAt: Date.now() + (body.expires_in ?? 3600) * 1000 };
    return body.access_token;
  }
}
