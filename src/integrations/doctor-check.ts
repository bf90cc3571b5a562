import { errorMessage } from '../errors.ts';
import { verifyAccount } from './connect-account.ts';
import { PROVIDERS, type Provider } from './credentials/credential-types.ts';
import { environmentAccount, type IntegrationSettings, OWNER_USER, reconnectHint } from './integrations.ts';
import { ProviderError } from './provider-error.ts';

export type ProviderCheck = { name: string; ok: boolean; detail: string; fix?: string };

const LABELS: Record<Provider, string> = {
  email: 'email (IMAP/SMTP)',
  google: 'google (Gmail, Calendar, Drive)',
  hubspot: 'crm (HubSpot)',
  caldav: 'calendar (CalDAV)',
};

/**
 * The owner's accounts configured in the environment or steward.yaml, each proved with the
 * same harmless call `steward connect` makes. Accounts stored with `steward connect` were
 * proved when they were connected; a provider that is not configured gets no line.
 */
export async function providerChecks(
  settings: IntegrationSettings & { google: { api_url?: string }; hubspot: { base_url?: string } },
  timeoutMs = 20_000,
): Promise<ProviderCheck[]> {
  const configured = PROVIDERS.map((provider) => ({
    provider,
    account: environmentAccount(settings, provider),
  }));
  return Promise.all(
    configured
      .filter(({ account }) => account !== null)
      .map(async ({ provider, account }): Promise<ProviderCheck> => {
        const name = LABELS[provider];
        const signal = AbortSignal.timeout(timeoutMs);
        try {
          const proved = await verifyAccount(
            provider,
            account!.credentials,
            { apiUrl: settings.google.api_url, hubspotBaseUrl: settings.hubspot.base_url },
            OWNER_USER,
            signal,
          );
          return { name, ok: true, detail: `${proved} answers` };
        } catch (error) {
          return {
            name,
            ok: false,
            detail: signal.aborted
              ? `no answer within ${timeoutMs / 1000} s`
              : error instanceof ProviderError
                ? error.message
                : errorMessage(error),
            fix: reconnectHint(provider, 'env', OWNER_USER),
          };
        }
      }),
  );
}
