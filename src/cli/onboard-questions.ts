import type { ChannelName } from '../channels/index.ts';

/** One setting a channel needs; its flag is the variable's name in kebab case (--telegram-bot-token). */
export type ChannelField = {
  env: string;
  prompt: string;
  secret?: boolean;
  /** Made up when not given (a secret the person chooses, not one a platform hands out). */
  generate?: boolean;
  optional?: boolean;
};

/** `webhook`: needs a public https URL; `choice`: webhook or polling; `outbound`: Steward connects out. */
export type ChannelSetup = {
  channel: ChannelName;
  label: string;
  delivery: 'webhook' | 'choice' | 'outbound';
  fields: ChannelField[];
};

export const ONBOARD_CHANNELS: readonly ChannelSetup[] = [
  {
    channel: 'telegram',
    label: 'Telegram',
    delivery: 'choice',
    fields: [{ env: 'TELEGRAM_BOT_TOKEN', prompt: 'Bot token (from @BotFather: /newbot)', secret: true }],
  },
  {
    channel: 'slack',
    label: 'Slack',
    delivery: 'webhook',
    fields: [
      { env: 'SLACK_BOT_TOKEN', prompt: 'Bot User OAuth Token (xoxb-…, OAuth & Permissions)', secret: true },
      {
        env: 'SLACK_SIGNING_SECRET',
        prompt: 'Signing secret (Basic Information → App Credentials)',
        secret: true,
      },
    ],
  },
  {
    channel: 'whatsapp',
    label: 'WhatsApp (Cloud API)',
    delivery: 'webhook',
    fields: [
      { env: 'WHATSAPP_ACCESS_TOKEN', prompt: 'Access token (a System User token)', secret: true },
      { env: 'WHATSAPP_APP_SECRET', prompt: 'App secret (App settings → Basic)', secret: true },
      { env: 'WHATSAPP_PHONE_NUMBER_ID', prompt: 'Phone number ID (WhatsApp → API Setup)' },
      {
        env: 'WHATSAPP_VERIFY_TOKEN',
        prompt: 'Verify token for the webhook (you choose it; Enter makes one)',
        secret: true,
        generate: true,
      },
    ],
  },
  {
    channel: 'googlechat',
    label: 'Google Chat',
    delivery: 'webhook',
    fields: [
      { env: 'GOOGLE_CHAT_PROJECT_NUMBER', prompt: 'Google Cloud project number' },
      {
        env: 'GOOGLE_CHAT_SERVICE_ACCOUNT',
        prompt: 'Service-account JSON key file (for replies after 25 s; Enter to skip)',
        optional: true,
      },
    ],
  },
  {
    channel: 'discord',
    label: 'Discord',
    delivery: 'outbound',
    fields: [
      { env: 'DISCORD_BOT_TOKEN', prompt: 'Bot token (Developer Portal → Bot → Reset Token)', secret: true },
    ],
  },
  {
    channel: 'matrix',
    label: 'Matrix',
    delivery: 'outbound',
    fields: [
      { env: 'MATRIX_HOMESERVER_URL', prompt: 'Homeserver URL (https://matrix.example.org)' },
      { env: 'MATRIX_USER_ID', prompt: 'Bot account (@steward:example.org)' },
      { env: 'MATRIX_ACCESS_TOKEN', prompt: 'Access token of that account', secret: true },
    ],
  },
];

/** `TELEGRAM_BOT_TOKEN` → `--telegram-bot-token`. */
export const flagOf = (env: string) => `--${env.toLowerCase().replaceAll('_', '-')}`;

/** `TELEGRAM_BOT_TOKEN` → `telegramBotToken`, the key commander gives the option. */
export const optionKeyOf = (env: string) =>
  env.toLowerCase().replace(/_([a-z])/g, (_match, letter: string) => letter.toUpperCase());
