import type { ResolvedConfig } from '../config/index.ts';
import type { Queryable } from '../db/index.ts';
import { parseAddress } from '../integrations/index.ts';
import type { Logger } from '../logging/index.ts';
import { senderAdmitted } from './access.ts';
import { channelCursors, memoryCursors } from './cursor-store.ts';
import type { ChannelAdapter, ChannelName } from './types.ts';

/**
 * The route each webhook channel's platform must be told about, under STEWARD_PUBLIC_URL
 * (Discord, Matrix, Signal and email reach out for their events and have none).
 */
export const WEBHOOK_PATHS: Partial<Record<ChannelName, string>> = {
  telegram: '/webhooks/telegram',
  slack: '/webhooks/slack/events',
  whatsapp: '/webhooks/whatsapp',
  googlechat: '/webhooks/googlechat',
};

/**
 * The URL platforms reach this server at: `channels.public_url` when set, else the server's
 * `public_url` (STEWARD_PUBLIC_URL).
 */
export function channelsPublicUrl(
  config: Pick<ResolvedConfig, 'public_url' | 'channels'>,
): string | undefined {
  return (config.channels.public_url ?? config.public_url)?.replace(/\/+$/, '');
}

/** What to set to turn each channel on (shown for channels that are off). */
export const CHANNEL_SETUP: Record<ChannelName, string> = {
  telegram: 'set TELEGRAM_BOT_TOKEN (and, for webhooks, STEWARD_PUBLIC_URL + TELEGRAM_WEBHOOK_SECRET)',
  slack: 'set SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET',
  whatsapp:
    'set WHATSAPP_ACCESS_TOKEN, WHATSAPP_APP_SECRET, WHATSAPP_VERIFY_TOKEN and WHATSAPP_PHONE_NUMBER_ID',
  googlechat: 'set GOOGLE_CHAT_PROJECT_NUMBER (and GOOGLE_CHAT_SERVICE_ACCOUNT for replies after 25 s)',
  discord: 'set DISCORD_BOT_TOKEN (and turn on the Message Content intent for the bot)',
  matrix: 'set MATRIX_HOMESERVER_URL, MATRIX_ACCESS_TOKEN and MATRIX_USER_ID',
  signal: 'set SIGNAL_CLI_URL (a signal-cli REST API you run) and SIGNAL_NUMBER',
  email: 'set EMAIL_CHANNEL=on with EMAIL_IMAP_URL, EMAIL_SMTP_URL and EMAIL_FROM',
};

/** Settings that contradict each other or lack a partner, each with what to set. */
export function channelConfigProblems(config: ResolvedConfig): Partial<Record<ChannelName, string[]>> {
  const { telegram, slack, whatsapp, googlechat } = config.channels;
  const problems: Partial<Record<ChannelName, string[]>> = {};
  const add = (channel: ChannelName, problem: string) => {
    problems[channel] = [...(problems[channel] ?? []), problem];
  };
  if (!telegram.bot_token && telegram.webhook_secret) {
    add(
      'telegram',
      'TELEGRAM_WEBHOOK_SECRET is set without TELEGRAM_BOT_TOKEN: set TELEGRAM_BOT_TOKEN (from @BotFather)',
    );
  }
  if (Boolean(slack.bot_token) !== Boolean(slack.signing_secret)) {
    add(
      'slack',
      slack.bot_token
        ? 'SLACK_BOT_TOKEN is set without SLACK_SIGNING_SECRET: set SLACK_SIGNING_SECRET (Basic Information → App Credentials) so events can be verified'
        : 'SLACK_SIGNING_SECRET is set without SLACK_BOT_TOKEN: set SLACK_BOT_TOKEN (OAuth & Permissions → Bot User OAuth Token)',
    );
  }
  const whatsappMissing = unsetWhenPartlySet({
    WHATSAPP_ACCESS_TOKEN: whatsapp.access_token,
    WHATSAPP_APP_SECRET: whatsapp.app_secret,
    WHATSAPP_VERIFY_TOKEN: whatsapp.verify_token,
    WHATSAPP_PHONE_NUMBER_ID: whatsapp.phone_number_id,
  });
  if (whatsappMissing.length)
    add('whatsapp', `WhatsApp is partly configured: set ${whatsappMissing.join(', ')}`);
  const { matrix } = config.channels;
  const matrixMissing = unsetWhenPartlySet({
    MATRIX_HOMESERVER_URL: matrix.homeserver_url,
    MATRIX_ACCESS_TOKEN: matrix.access_token,
    MATRIX_USER_ID: matrix.user_id,
  });
  if (matrixMissing.length) add('matrix', `Matrix is partly configured: set ${matrixMissing.join(', ')}`);
  const { signal } = config.channels;
  if (Boolean(signal.cli_url) !== Boolean(signal.number)) {
    add(
      'signal',
      signal.cli_url
        ? 'SIGNAL_CLI_URL is set without SIGNAL_NUMBER: set the number registered in signal-cli (+4915…)'
        : 'SIGNAL_NUMBER is set without SIGNAL_CLI_URL: set the URL of your signal-cli REST API (http://127.0.0.1:8080)',
    );
  }
  if (config.channels.email === 'on') {
    const emailMissing = Object.entries({
      EMAIL_IMAP_URL: config.email.imap_url,
      EMAIL_SMTP_URL: config.email.smtp_url,
      EMAIL_FROM: config.email.from,
    })
      .filter(([, value]) => !value)
      .map(([name]) => name);
    if (emailMissing.length > 0)
      add('email', `EMAIL_CHANNEL=on needs ${emailMissing.join(', ')}: set the assistant's mailbox`);
    else if (!parseAddress(config.email.from ?? ''))
      add(
        'email',
        'EMAIL_FROM is not an address: write addr or Name <addr>, e.g. Steward <steward@example.com>',
      );
  }
  if (!googlechat.project_number && googlechat.service_account) {
    add(
      'googlechat',
      'GOOGLE_CHAT_SERVICE_ACCOUNT is set without GOOGLE_CHAT_PROJECT_NUMBER: set the project number (the JWT audience)',
    );
  }
  return problems;
}

/**
 * What channels that reach out for their events need besides their settings: the database for
 * their cursors and to check who may invite them, and the live settings (STEWARD_ALLOW). Without
 * a database (doctor, `steward channels`) such a channel is only described, never started.
 */
export type ChannelServices = {
  database?: Queryable;
  config?: () => ResolvedConfig;
};

/**
 * One adapter per configured channel, plus every configuration problem (logged at start, shown
 * by doctor). A channel's module (and its platform library: grammy, jose…) is loaded only when
 * the channel is configured.
 */
export async function createChannelAdapters(
  config: ResolvedConfig,
  logger: Logger,
  services: ChannelServices = {},
): Promise<{ adapters: ChannelAdapter[]; problems: Partial<Record<ChannelName, string[]>> }> {
  const { telegram, slack, whatsapp, googlechat, discord, matrix, signal } = config.channels;
  const cursors = (channel: ChannelName) =>
    services.database ? channelCursors(services.database, channel) : memoryCursors();
  const candidates: Array<ChannelAdapter | null> = [];
  if (telegram.bot_token) {
    const { telegramFromConfig } = await import('./telegram/telegram-adapter.ts');
    candidates.push(telegramFromConfig(config.channels, channelsPublicUrl(config), logger));
  }
  if (slack.bot_token && slack.signing_secret) {
    const { slackFromConfig } = await import('./slack/slack-adapter.ts');
    candidates.push(slackFromConfig(config.channels, logger));
  }
  if (whatsapp.access_token && whatsapp.app_secret && whatsapp.verify_token && whatsapp.phone_number_id) {
    const { whatsappFromConfig } = await import('./whatsapp/whatsapp-adapter.ts');
    candidates.push(whatsappFromConfig(config.channels, logger));
  }
  if (googlechat.project_number) {
    const { googleChatFromConfig } = await import('./googlechat/googlechat-adapter.ts');
    candidates.push(googleChatFromConfig(config.channels, logger));
  }
  if (discord.bot_token) {
    const { discordFromConfig } = await import('./discord/discord-adapter.ts');
    candidates.push(discordFromConfig(config.channels, logger, cursors('discord')));
  }
  if (matrix.homeserver_url && matrix.access_token && matrix.user_id) {
    const { matrixFromConfig } = await import('./matrix/matrix-adapter.ts');
    const database = services.database;
    const allow = () => (services.config?.() ?? config).channels.allow;
    candidates.push(
      matrixFromConfig(config.channels, logger, {
        cursors: cursors('matrix'),
        admitted: (senderId) =>
          database ? senderAdmitted(database, 'matrix', senderId, allow()) : Promise.resolve(false),
      }),
    );
  }
  if (signal.cli_url && signal.number) {
    const { signalFromConfig } = await import('./signal/signal-adapter.ts');
    candidates.push(signalFromConfig(config.channels, logger));
  }
  if (config.channels.email === 'on') {
    const { emailFromConfig } = await import('./email/email-adapter.ts');
    candidates.push(emailFromConfig(config, logger, cursors('email')));
  }
  const adapters = candidates.filter((adapter): adapter is ChannelAdapter => adapter !== null);
  const problems = channelConfigProblems(config);
  for (const adapter of adapters) {
    const own = adapter.problems?.() ?? [];
    if (own.length) problems[adapter.name] = [...(problems[adapter.name] ?? []), ...own];
  }
  return { adapters, problems };
}

/** The settings left unset when some, not all, of `settings` are set (a channel half configured). */
function unsetWhenPartlySet(settings: Record<string, string | undefined>): string[] {
  const unset = Object.entries(settings)
    .filter(([, value]) => !value)
    .map(([name]) => name);
  return unset.length < Object.keys(settings).length ? unset : [];
}
