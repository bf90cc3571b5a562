import {
  CHANNEL_NAMES,
  CHANNEL_SETUP,
  type ChannelAdapter,
  type ChannelName,
  channelsPublicUrl,
  createChannelAdapters,
  probeWithin,
  WEBHOOK_PATHS,
} from '../channels/index.ts';
import type { ResolvedConfig } from '../config/index.ts';
import { redactString, silentLogger } from '../logging/index.ts';
import type { Check } from './doctor-check.ts';

/** Where each webhook platform wants the URL entered; Telegram is told by Steward itself. */
const WEBHOOK_REGISTRATION: Partial<Record<ChannelName, string>> = {
  telegram: 'Steward registers it with Telegram when it starts',
  slack: 'enter it under Event Subscriptions → Request URL in the Slack app',
  whatsapp: 'enter it as the Callback URL under WhatsApp → Configuration in the Meta app',
  googlechat: 'enter it as the HTTP endpoint URL in the Chat API configuration',
};

const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/i;

/** Platforms refuse webhooks to plain http (Telegram's setWebhook among them); loopback is a test set-up. */
function plainHttpPublicUrl(publicUrl: string | undefined): boolean {
  if (!publicUrl) return false;
  try {
    const url = new URL(publicUrl);
    return url.protocol === 'http:' && !LOOPBACK.test(url.hostname);
  } catch {
    return false;
  }
}

export type ChannelCheckOptions = {
  /** Make each enabled channel's harmless call (getMe, auth.test…); off, only the settings are read. */
  probe?: boolean;
  /** Apply the safe repairs probes offer (re-register Steward's own webhook). */
  fix?: boolean;
  probeTimeoutMs?: number;
};

/**
 * One check per channel: off (with what to set), or on with its mode, its webhook URL and where
 * it goes, every settings problem, and (with `probe`) whether the platform answered and took
 * the credentials — a channel whose API does not answer FAILs with the fix.
 */
export async function channelChecks(
  config: ResolvedConfig,
  options: ChannelCheckOptions = {},
): Promise<Check[]> {
  const { adapters, problems } = await createChannelAdapters(config, silentLogger());
  const publicUrl = channelsPublicUrl(config);
  return Promise.all(
    CHANNEL_NAMES.map(async (channel): Promise<Check> => {
      const adapter = adapters.find((candidate) => candidate.name === channel);
      const found = problems[channel] ?? [];
      const name = `channel ${channel}`;
      if (!adapter) {
        return found.length
          ? { name, ok: false, detail: `off: ${found.join('; ')}`, fix: CHANNEL_SETUP[channel] }
          : { name, ok: true, detail: `off (to use it, ${CHANNEL_SETUP[channel]})` };
      }
      const where = describeMode(adapter, publicUrl);
      if (found.length)
        return {
          name,
          ok: false,
          detail: `on, ${where}: ${found.join('; ')}`,
          fix: 'set what the problem names',
        };
      const webhook = (adapter.mode ?? 'webhook') === 'webhook';
      if (webhook && plainHttpPublicUrl(publicUrl)) {
        return {
          name,
          ok: true,
          note: true,
          detail: `on, ${where}: the URL is plain http, which ${channel === 'telegram' ? 'Telegram refuses' : 'the platform refuses'} for webhooks`,
          fix: 'put TLS in front (a reverse proxy such as Caddy, or a tunnel) and set STEWARD_PUBLIC_URL to its https:// address',
        };
      }
      if (!options.probe || !adapter.probe) return { name, ok: true, detail: `on, ${where}` };
      return probed(config, adapter, name, where, options);
    }),
  );
}

function describeMode(adapter: ChannelAdapter, publicUrl: string | undefined): string {
  const mode = adapter.mode ?? 'webhook';
  if (mode === 'polling') return 'long polling';
  if (mode === 'socket') return 'a connection Steward keeps open (no public URL needed)';
  if (!publicUrl) return 'webhook; set STEWARD_PUBLIC_URL to see its URL';
  return `webhook ${publicUrl}${WEBHOOK_PATHS[adapter.name]} (${WEBHOOK_REGISTRATION[adapter.name]})`;
}

async function probed(
  config: ResolvedConfig,
  adapter: ChannelAdapter,
  name: string,
  where: string,
  options: ChannelCheckOptions,
): Promise<Check> {
  const timeout = options.probeTimeoutMs ?? 15_000;
  const redacted = (text: string) => redactString(text, config.secrets);
  let result = await probeWithin((signal) => adapter.probe!(signal), timeout);
  let repaired = '';
  if (!result.ok && result.repair && options.fix) {
    const repair = result.repair;
    const failed = await probeWithin(async (signal) => {
      await repair.run(signal);
      return { ok: true, detail: '' };
    }, timeout);
    if (failed.ok) {
      repaired = `fixed: ${repair.what}; `;
      result = await probeWithin((signal) => adapter.probe!(signal), timeout);
    }
  }
  if (result.ok) return { name, ok: true, detail: redacted(`on, ${where}: ${repaired}${result.detail}`) };
  return {
    name,
    ok: false,
    detail: redacted(`on, ${where}: ${result.problem}`),
    fix: redacted(result.fix),
    fixable: result.repair !== undefined,
  };
}
