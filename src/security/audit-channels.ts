import type { ResolvedConfig } from '../config/index.ts';
import type { Finding } from './finding.ts';

/*
 * The channel settings of issue #11's contract: each an environment variable and a key under
 * `channels.<name>` in steward.yaml. Only the loaded configuration is judged (it already holds
 * what the environment set), never this process's own environment. A credential is a setting
 * without a default: a defaulted URL (api_url, jwks_url) never makes a channel "configured".
 */
type ChannelRule = {
  channel: string;
  label: string;
  /** Any of these set means the channel is configured (settings without a default only). */
  credentials: string[];
  /** The secret that verifies its webhooks. */
  secret: string;
  severity: Finding['severity'];
  consequence: string;
};

const RULES: ChannelRule[] = [
  {
    channel: 'telegram',
    label: 'Telegram',
    credentials: ['TELEGRAM_BOT_TOKEN'],
    secret: 'TELEGRAM_WEBHOOK_SECRET',
    severity: 'low',
    consequence:
      'Steward falls back to long polling; webhooks (STEWARD_PUBLIC_URL) need the secret to be verified',
  },
  {
    channel: 'slack',
    label: 'Slack',
    credentials: ['SLACK_BOT_TOKEN'],
    secret: 'SLACK_SIGNING_SECRET',
    severity: 'high',
    consequence: 'its webhooks cannot be verified, so anyone who finds the URL could post as any Slack user',
  },
  {
    channel: 'whatsapp',
    label: 'WhatsApp',
    credentials: ['WHATSAPP_ACCESS_TOKEN', 'WHATSAPP_PHONE_NUMBER_ID'],
    secret: 'WHATSAPP_APP_SECRET',
    severity: 'high',
    consequence: 'its webhook signatures cannot be checked, so forged messages would be accepted',
  },
  {
    channel: 'whatsapp',
    label: 'WhatsApp',
    credentials: ['WHATSAPP_ACCESS_TOKEN', 'WHATSAPP_PHONE_NUMBER_ID'],
    secret: 'WHATSAPP_VERIFY_TOKEN',
    severity: 'medium',
    consequence: 'the webhook subscription handshake cannot be answered safely',
  },
  {
    channel: 'googlechat',
    label: 'Google Chat',
    credentials: ['GOOGLE_CHAT_SERVICE_ACCOUNT'],
    secret: 'GOOGLE_CHAT_PROJECT_NUMBER',
    severity: 'high',
    consequence: "the JWT Google signs each request with cannot be checked against your project's audience",
  },
];

const CHANNEL_PREFIX: Record<string, string> = {
  telegram: 'TELEGRAM_',
  slack: 'SLACK_',
  whatsapp: 'WHATSAPP_',
  googlechat: 'GOOGLE_CHAT_',
};

/** A channel setting of the loaded configuration: `channels.<name>.<key>` (also `google_chat`). */
export function channelSetting(config: ResolvedConfig, name: string, channel: string): string | undefined {
  const key = name.slice(CHANNEL_PREFIX[channel]!.length).toLowerCase();
  const channels = config.channels as Record<string, unknown>;
  for (const section of channel === 'googlechat' ? ['googlechat', 'google_chat'] : [channel]) {
    const value = (channels[section] as Record<string, unknown> | undefined)?.[key];
    if (typeof value === 'string' && value) return value;
  }
  return undefined;
}

/** Channels configured without the secret that verifies their webhooks, and secrets too short to trust. */
export function channelFindings(config: ResolvedConfig): Finding[] {
  const findings: Finding[] = [];
  for (const rule of RULES) {
    const configured = rule.credentials.some((name) => channelSetting(config, name, rule.channel));
    if (!configured) continue;
    const secret = channelSetting(config, rule.secret, rule.channel);
    const key = `channels.${rule.channel}.${rule.secret.slice(CHANNEL_PREFIX[rule.channel]!.length).toLowerCase()}`;
    if (!secret) {
      findings.push({
        id: 'channel-without-webhook-secret',
        severity: rule.severity,
        message: `${rule.label} is configured without ${rule.secret}: ${rule.consequence}.`,
        fix:
          rule.channel === 'telegram'
            ? `Choose a secret yourself and set ${rule.secret} (or ${key}) to it: 16 or more random characters (openssl rand -hex 16). Telegram has no such setting to copy; Steward hands the secret to Telegram when it registers the webhook, and Telegram sends it back with every update.`
            : `Set ${rule.secret} (or ${key}) to the value from the ${rule.label} app settings.`,
      });
    } else if (rule.channel === 'telegram' && secret.length < 16) {
      findings.push({
        id: 'webhook-secret-short',
        severity: 'medium',
        message: `${rule.secret} has ${secret.length} characters; a short webhook secret can be guessed.`,
        fix: `Use at least 16 random characters: ${rule.secret}=$(openssl rand -hex 16).`,
      });
    }
  }
  if (config.channels.email === 'on' && config.channels.email_require_authentication === 'off') {
    findings.push({
      id: 'email-channel-trusts-from',
      severity: 'high',
      message:
        'The email channel takes mail without checking that the receiving server authenticated its sender: anyone who knows an admitted address can write to Steward as that person.',
      fix: 'Set EMAIL_REQUIRE_AUTHENTICATION=on (the default), on a mail server that adds Authentication-Results (DKIM, SPF, DMARC).',
    });
  }
  return findings;
}
