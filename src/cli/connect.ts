import type { ResolvedConfig } from '../config/index.ts';
import { openDatabase } from '../db/index.ts';
import { errorMessage, StewardError } from '../errors.ts';
import {
  connectAccount,
  Integrations,
  PROVIDERS,
  type Provider,
  runGoogleOAuthFlow,
  serviceAccountCredentials,
} from '../integrations/index.ts';
import { ensureUser, userIdProblem } from '../users/index.ts';
import { CliExit, EXIT_ERROR, EXIT_OK, EXIT_USAGE } from './common.ts';
import { remoteServer } from './remote.ts';

export type ConnectOptions = {
  user: string;
  clientId?: string;
  clientSecret?: string;
  serviceAccount?: string;
  impersonate?: string;
  imap?: string;
  smtp?: string;
  from?: string;
  token?: string;
  baseUrl?: string;
  url?: string;
  username?: string;
  password?: string;
};

type Credentials = Parameters<typeof connectAccount>[4];

/**
 * The credentials the options give for `name`, checked before anything else: a missing or
 * malformed option is a usage error whether or not a server runs. Google's browser sign-in
 * happens here, on this machine.
 */
async function credentialsFrom(
  config: ResolvedConfig,
  name: Provider,
  options: ConnectOptions,
): Promise<Credentials> {
  if (name === 'google') {
    if (
      options.serviceAccount ||
      (!options.clientId && config.google.application_credentials && options.impersonate)
    ) {
      const file = options.serviceAccount ?? config.google.application_credentials!;
      const subject = options.impersonate ?? config.google.impersonate;
      if (!subject)
        throw new CliExit(
          EXIT_USAGE,
          'steward connect google: a service account needs --impersonate user@your-domain',
        );
      try {
        return serviceAccountCredentials(file, subject);
      } catch (error) {
        throw new CliExit(EXIT_USAGE, `steward connect google: ${errorMessage(error)}`);
      }
    }
    const clientId = options.clientId ?? config.google.client_id;
    const clientSecret = options.clientSecret ?? config.google.client_secret;
    if (!clientId || !clientSecret) {
      throw new CliExit(
        EXIT_USAGE,
        'steward connect google: give the OAuth client of a "Desktop app" (--client-id and --client-secret, or GOOGLE_CLIENT_ID / GOOGLE_CLIENT_SECRET), or a service account (--service-account key.json --impersonate user@domain)',
      );
    }
    try {
      return await runGoogleOAuthFlow({
        clientId,
        clientSecret,
        apiUrl: config.google.api_url,
        showUrl: (url) => process.stdout.write(`Open this address in a browser and allow access:\n${url}\n`),
      });
    } catch (error) {
      throw new CliExit(EXIT_ERROR, `steward connect google: ${errorMessage(error)}`);
    }
  }
  if (name === 'email') {
    const imap = options.imap ?? (options.user === 'local' ? config.email.imap_url : undefined);
    const smtp = options.smtp ?? (options.user === 'local' ? config.email.smtp_url : undefined);
    if (!imap || !smtp) {
      throw new CliExit(
        EXIT_USAGE,
        'steward connect email: give --imap imaps://user:pass@host and --smtp smtps://user:pass@host (and --from "Name <addr>")',
      );
    }
    const from = options.from ?? (options.user === 'local' ? config.email.from : undefined) ?? userOf(imap);
    if (!from) throw new CliExit(EXIT_USAGE, 'steward connect email: give --from addr (or "Name <addr>")');
    return { imapUrl: imap, smtpUrl: smtp, from };
  }
  if (name === 'hubspot') {
    const token = options.token ?? (options.user === 'local' ? config.hubspot.access_token : undefined);
    if (!token)
      throw new CliExit(
        EXIT_USAGE,
        'steward connect hubspot: give --token <private app access token> (HubSpot: Settings → Integrations → Private apps)',
      );
    return { accessToken: token, ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}) };
  }
  if (!options.url || !options.username || !options.password) {
    throw new CliExit(
      EXIT_USAGE,
      'steward connect caldav: give --url https://host/dav/ --username U --password P (an app password)',
    );
  }
  return { url: options.url, username: options.username, password: options.password };
}

/** Calls the running server's account API; its refusal ends the command with its message. */
async function relay<T>(
  remote: NonNullable<ReturnType<typeof remoteServer>>,
  what: string,
  path: string,
  body: object,
): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`${remote.url}/api${path}`, {
      method: 'POST',
      headers: remote.headers,
      body: JSON.stringify(body),
    });
  } catch (error) {
    throw new CliExit(
      EXIT_ERROR,
      `${what}: the server at ${remote.url} does not answer: ${errorMessage(error)}`,
    );
  }
  const answer = (await response.json().catch(() => ({}))) as T & { message?: string };
  if (!response.ok)
    throw new CliExit(
      EXIT_ERROR,
      `${what}: ${answer.message ?? `the server answered HTTP ${response.status}`}`,
    );
  return answer;
}

/**
 * `steward connect <provider>`: checks its options, then the credentials with the provider,
 * then stores them encrypted for the user — through the running server when one owns the
 * embedded database. Exit 0 connected, 1 the provider refused, 2 bad or missing options.
 */
export async function connectCommand(
  config: ResolvedConfig,
  provider: string,
  options: ConnectOptions,
): Promise<void> {
  const name = checkProvider(provider, options.user);
  const credentials = await credentialsFrom(config, name, options);
  const remote = remoteServer(config);
  let account: string;
  if (remote) {
    const what = `steward connect ${name}: not connected`;
    ({ account } = await relay<{ account: string }>(remote, what, '/accounts/connect', {
      user: options.user,
      provider: name,
      credentials,
    }));
  } else {
    const settings = { apiUrl: config.google.api_url, hubspotBaseUrl: config.hubspot.base_url };
    const result = await withIntegrations(config, options.user, (integrations) =>
      connectAccount(integrations, settings, options.user, name, credentials),
    );
    if (!result.ok) throw new CliExit(EXIT_ERROR, `steward connect ${name}: not connected: ${result.error}`);
    account = result.account;
  }
  process.stdout.write(`Connected ${name} (${account}) for user ${options.user}.\n`);
  throw new CliExit(EXIT_OK);
}

/** `steward disconnect <provider>`: forgets the user's stored account. */
export async function disconnectCommand(
  config: ResolvedConfig,
  provider: string,
  options: { user: string },
): Promise<void> {
  const name = checkProvider(provider, options.user);
  const remote = remoteServer(config);
  const removed = remote
    ? (
        await relay<{ removed: boolean }>(remote, `steward disconnect ${name}`, '/accounts/disconnect', {
          user: options.user,
          provider: name,
        })
      ).removed
    : await withIntegrations(config, options.user, (integrations) =>
        integrations.credentials.remove(options.user, name),
      );
  const envNote =
    options.user === 'local'
      ? ' Settings in the environment or steward.yaml (if any) still apply to the owner.'
      : '';
  process.stdout.write(
    removed
      ? `Disconnected ${name} for user ${options.user}.${envNote}\n`
      : `No stored ${name} account for user ${options.user}.${envNote}\n`,
  );
  throw new CliExit(EXIT_OK);
}

function checkProvider(provider: string, user: string): Provider {
  const problem = userIdProblem(user);
  if (problem) throw new CliExit(EXIT_USAGE, `steward connect: ${problem}`);
  if (!(PROVIDERS as readonly string[]).includes(provider)) {
    throw new CliExit(
      EXIT_USAGE,
      `steward connect: unknown provider "${provider}": use one of ${PROVIDERS.join(', ')}`,
    );
  }
  return provider as Provider;
}

async function withIntegrations<T>(
  config: ResolvedConfig,
  userId: string,
  work: (integrations: Integrations) => Promise<T>,
): Promise<T> {
  const { database, lock } = await openDatabase(config);
  try {
    await ensureUser(database, userId);
    return await work(new Integrations({ database, config: () => config }));
  } catch (error) {
    if (error instanceof CliExit) throw error;
    if (error instanceof StewardError) throw new CliExit(EXIT_ERROR, `steward connect: ${error.message}`);
    throw new CliExit(EXIT_ERROR, `steward connect: ${errorMessage(error)}`);
  } finally {
    await database.close();
    lock?.release();
  }
}

function userOf(url: string): string | undefined {
  try {
    const user = decodeURIComponent(new URL(url).username);
    return user.includes('@') ? user : undefined;
  } catch {
    return undefined;
  }
}
