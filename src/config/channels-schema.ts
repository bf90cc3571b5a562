import { z } from 'zod';
import { commaList, httpUrl, optionalSecret } from './services-schema.ts';

/** How a channel's conversations run by default (a per-chat choice overrides it). */
export const channelMode = z.enum(['multi_agent', 'single_loop', 'direct']);

const allowList = z
  .preprocess(
    commaList,
    z
      .array(
        z
          .string()
          .regex(
            /^[a-z]+:[^=,\s]+(=[^=,\s]+)?$/,
            'entries are channel:sender or channel:sender=USER, e.g. telegram:12345,slack:U024BE7LH',
          ),
      )
      .default([]),
  )
  .describe(
    'Senders admitted without pairing: `channel:sender` or `channel:sender=USER` (that user), comma-separated.',
  );

export const channelsSchema = z
  .object({
    modes: z
      .record(z.string(), channelMode)
      .default({})
      .describe('Agent mode per channel (text channels `multi_agent`, voice `single_loop`).'),
    public_url: httpUrl
      .optional()
      .describe('Where the platforms reach this server, for the channels alone (default: `public_url`).'),
    allow: allowList,
    telegram: z
      .object({
        bot_token: optionalSecret.describe("The bot's token from @BotFather; turns Telegram on."),
        webhook_secret: z
          .string()
          .regex(/^[A-Za-z0-9_-]{1,256}$/, 'use 1-256 characters from A-Z, a-z, 0-9, _ and -')
          .optional()
          .describe(
            '1–256 of `A–Z a–z 0–9 _ -`; with a public URL, Telegram uses the webhook (else long polling).',
          ),
        api_root: httpUrl
          .default('https://api.telegram.org')
          .describe("The Bot API server (grammy's `apiRoot`; a local Bot API server works)."),
      })
      .strict()
      .default({ api_root: 'https://api.telegram.org' }),
    slack: z
      .object({
        bot_token: optionalSecret.describe('The Bot User OAuth Token (`xoxb-…`).'),
        signing_secret: optionalSecret.describe("The app's signing secret; with the token, turns Slack on."),
        api_url: httpUrl.default('https://slack.com/api/').describe('The Web API root.'),
      })
      .strict()
      .default({ api_url: 'https://slack.com/api/' }),
    whatsapp: z
      .object({
        access_token: optionalSecret.describe("A Cloud API access token (a system user's, for production)."),
        app_secret: optionalSecret.describe("The Meta app's secret (signs webhooks)."),
        verify_token: optionalSecret.describe(
          "Any string you choose; the same in the Meta app's webhook settings.",
        ),
        phone_number_id: z
          .string()
          .regex(/^\d+$/, 'must be the numeric phone number id')
          .optional()
          .describe("The sending number's id; all four settings turn WhatsApp on."),
        graph_url: httpUrl
          .default('https://graph.facebook.com/v21.0')
          .describe('The Graph API root, with its version.'),
      })
      .strict()
      .default({ graph_url: 'https://graph.facebook.com/v21.0' }),
    googlechat: z
      .object({
        project_number: z
          .string()
          .regex(/^\d+$/, 'must be the numeric Google Cloud project number')
          .optional()
          .describe("The Google Cloud project number (the audience of Chat's tokens); turns Google Chat on."),
        jwks_url: httpUrl
          .default('https://www.googleapis.com/service_accounts/v1/jwk/chat@system.gserviceaccount.com')
          .describe("Chat's public keys."),
        api_url: httpUrl.default('https://chat.googleapis.com').describe('The Chat API root.'),
        service_account: z
          .string()
          .min(1)
          .optional()
          .describe('Path of a service-account JSON key, for answers after 25 s and deliveries.'),
      })
      .strict()
      .default({
        jwks_url: 'https://www.googleapis.com/service_accounts/v1/jwk/chat@system.gserviceaccount.com',
        api_url: 'https://chat.googleapis.com',
      }),
    discord: z
      .object({
        bot_token: optionalSecret.describe("The bot's token (Developer Portal → Bot); turns Discord on."),
        api_url: httpUrl
          .default('https://discord.com/api/v10')
          .describe('The REST API root, with its version.'),
        gateway_url: z
          .url({ protocol: /^wss?$/, error: 'must be a ws(s):// URL' })
          .optional()
          .describe(
            'A `ws(s)://` URL used instead of the one `GET /gateway/bot` gives (a proxy, a test fake).',
          ),
      })
      .strict()
      .default({ api_url: 'https://discord.com/api/v10' }),
    matrix: z
      .object({
        homeserver_url: httpUrl
          .optional()
          .describe("The homeserver's client URL, e.g. `https://matrix.example.org`."),
        access_token: optionalSecret.describe("The bot account's access token."),
        user_id: z
          .string()
          .regex(/^@[^:\s]+:\S+$/, "must be the bot account's full Matrix id, e.g. @steward:example.org")
          .optional()
          .describe("The bot account's id, `@steward:example.org`; all three settings turn Matrix on."),
      })
      .strict()
      .default({}),
    signal: z
      .object({
        cli_url: httpUrl
          .optional()
          .describe(
            'The signal-cli REST API you run (bbernhard/signal-cli-rest-api), e.g. `http://127.0.0.1:8080`; `user:pass@` in it is sent as Basic auth.',
          ),
        number: z
          .string()
          .regex(
            /^\+[1-9]\d{5,14}$/,
            "must be the bot account's number in international format, e.g. +4915112345678",
          )
          .optional()
          .describe(
            "The bot account's number in signal-cli, `+4915112345678`; with the URL, turns Signal on.",
          ),
      })
      .strict()
      .default({}),
    email: z
      .enum(['on', 'off'], { error: 'use on or off' })
      .default('off')
      .describe(
        '`on`: mail to EMAIL_FROM from admitted senders becomes turns (the `email` mailbox settings).',
      ),
    email_poll_seconds: z.coerce
      .number()
      .int()
      .min(1)
      .max(3600)
      .default(60)
      .describe('Seconds between inbox checks of the email channel when IMAP IDLE brings no news.'),
    email_require_authentication: z
      .enum(['on', 'off'], { error: 'use on or off' })
      .default('on')
      .describe(
        "`on`: mail is taken only when the receiving server's Authentication-Results proves the sender (DMARC, DKIM or SPF pass).",
      ),
  })
  .strict()
  .describe('Chat channels. A token without its partner is reported at start-up and the channel stays off.');
export type ChannelsConfig = z.infer<typeof channelsSchema>;
