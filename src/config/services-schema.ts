import { z } from 'zod';

export const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });
export const optionalSecret = z.string().min(1).optional();

/** `a,b,c` from the environment, or a YAML list. */
export const commaList = (value: unknown) =>
  typeof value === 'string'
    ? value
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean)
    : value;

export const emailSchema = z
  .object({
    imap_url: z
      .string()
      .regex(/^imaps?:\/\/[^/]+/, 'must be imap://user:pass@host:port or imaps://… (TLS)')
      .optional()
      .describe("The owner's mailbox: `imap://user:pass@host:port` or `imaps://…` (TLS)."),
    smtp_url: z
      .string()
      .regex(/^smtps?:\/\/[^/]+/, 'must be smtp://user:pass@host:port or smtps://… (TLS)')
      .optional()
      .describe(
        "The owner's outgoing server: `smtp://…` or `smtps://…`; plain `smtp://` uses STARTTLS only with `?starttls=true`.",
      ),
    from: z
      .string()
      .min(3)
      .optional()
      .describe('Sender, `addr` or `Name <addr>` (default: the IMAP user when it is an address).'),
  })
  .strict()
  .describe("The owner's (`local`) mailbox; other users connect theirs with `steward connect email`.");

export const googleSchema = z
  .object({
    application_credentials: z
      .string()
      .min(1)
      .optional()
      .describe('Service-account key file (Workspace, domain-wide delegation).'),
    impersonate: z.string().min(3).optional().describe('The Workspace user the service account acts as.'),
    api_url: z
      .url('must be an http(s) URL')
      .optional()
      .describe("Root URL of Gmail, Calendar and Drive and of the token endpoint; default Google's."),
    client_id: z
      .string()
      .min(1)
      .optional()
      .describe('The OAuth client (type Desktop app) of `steward connect google`.'),
    client_secret: z.string().min(1).optional().describe('That OAuth client\u2019s secret.'),
  })
  .strict()
  .describe(
    'Google for the owner: a service account (domain-wide delegation), the OAuth client and the API root.',
  );

export const hubspotSchema = z
  .object({
    access_token: z
      .string()
      .min(8, 'must be a HubSpot private app access token')
      .optional()
      .describe("The owner's HubSpot private app token."),
    base_url: z
      .url('must be an http(s) URL')
      .optional()
      .describe("Root URL of the HubSpot API; default HubSpot's."),
  })
  .strict()
  .describe('HubSpot CRM for the owner; other users run `steward connect hubspot`.');

export const caldavSchema = z
  .object({
    url: z
      .url('must be https://user:password@host/path of the CalDAV server')
      .optional()
      .describe(
        "The owner's CalDAV server, `https://user:password@host/path`; used when Google is not connected.",
      ),
  })
  .strict()
  .describe('A CalDAV calendar for the owner (iCloud, Fastmail, Nextcloud).');

const SERVER_NAME = /^[a-z][a-z0-9_]*$/;

/**
 * One MCP server: a stdio command or a Streamable HTTP URL. Its name is the skill domain its
 * tools appear under. `${VAR}` in `env` and `headers` values reads Steward's environment at
 * start-up, so tokens need not sit in steward.yaml.
 */
export const mcpServerSchema = z
  .object({
    name: z
      .string()
      .regex(
        SERVER_NAME,
        'must be a skill domain name: lower-case letters, digits and _, starting with a letter',
      )
      .describe('The skill domain its tools appear under (lower-case letters, digits, `_`).'),
    command: z.string().min(1).optional().describe('A stdio server: the command to start.'),
    args: z.array(z.string()).optional().describe("The command's arguments."),
    env: z.record(z.string(), z.string()).optional().describe(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal ${VAR} syntax of steward.yaml
      "The stdio server's environment (it gets only this plus `PATH` and `HOME`); `${VAR}` reads Steward's.",
    ),
    url: z
      .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
      .optional()
      .describe('A Streamable HTTP server: its URL.'),
    headers: z
      .record(z.string(), z.string())
      .optional()
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal ${VAR} syntax of steward.yaml
      .describe("Headers sent to an URL server; `${VAR}` reads Steward's environment."),
  })
  .strict()
  .superRefine((server, ctx) => {
    if ((server.command === undefined) === (server.url === undefined))
      ctx.addIssue({
        code: 'custom',
        message: 'give either command (stdio) or url (Streamable HTTP), not both',
      });
    if (server.url !== undefined && (server.args !== undefined || server.env !== undefined))
      ctx.addIssue({
        code: 'custom',
        message: 'args and env apply to a command; an url server takes headers',
      });
    if (server.command !== undefined && server.headers !== undefined)
      ctx.addIssue({ code: 'custom', message: 'headers apply to an url server; a command server takes env' });
  });
export type McpServerConfig = z.infer<typeof mcpServerSchema>;

export const filesSchema = z
  .object({
    max_read_bytes: z
      .number()
      .int()
      .positive()
      .default(200_000)
      .describe('`files.read` refuses files with more text than this (bytes).'),
    max_index_bytes: z
      .number()
      .int()
      .positive()
      .default(20_000_000)
      .describe('Larger files are indexed by name only.'),
    drive_folder_id: z
      .string()
      .min(1)
      .optional()
      .describe('The Google Drive folder `files.sync` mirrors; unset: `Steward` at the top of My Drive.'),
  })
  .strict()
  .describe("Each user's files vault and its Drive mirror.");

export const workflowsSchema = z
  .object({
    enabled: z
      .boolean()
      .default(true)
      .describe(
        'Run schedules from skill frontmatter in this server (off: `steward schedules run` still works).',
      ),
    catch_up_seconds: z
      .number()
      .int()
      .min(0)
      .default(3600)
      .describe(
        'How late a run missed while Steward was down may still run at start, unless the file sets `catch_up`.',
      ),
    reminders: z.boolean().default(true).describe('Remind users of their tasks due, through `deliver()`.'),
    reminder_due_time: z
      .string()
      .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be a 24-hour time such as 09:00')
      .default('09:00')
      .describe("The local time (the user's profile zone) a task due on a date counts as due."),
    reminder_lead_minutes: z
      .number()
      .int()
      .min(0)
      .max(10_080)
      .default(0)
      .describe('How many minutes before that the reminder goes out (1440: the day before).'),
  })
  .strict()
  .describe('Scheduled workflows and task reminders.');

export const backupSchema = z
  .object({
    schedule: z
      .string()
      .trim()
      .min(1, 'must be a cron expression such as "0 3 * * *"')
      .optional()
      .describe(
        "Cron (five fields, the server's time zone) of scheduled backups, e.g. `0 3 * * *`; unset: none.",
      ),
    keep: z.coerce
      .number()
      .int()
      .min(1)
      .max(1000)
      .default(7)
      .describe(
        'How many backups `<data dir>/backups` keeps, scheduled and pre-upgrade alike (older ones are removed).',
      ),
  })
  .strict()
  .describe('Backups into `<data dir>/backups`: on a schedule, and before every upgrade\u2019s migrations.');

export const voiceSchema = z
  .object({
    elevenlabs: z
      .object({
        api_key: optionalSecret.describe('ElevenLabs API key; with the voice id, replies can be spoken.'),
        voice_id: z
          .string()
          .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be an ElevenLabs voice id')
          .optional()
          .describe('The voice replies are spoken in (from the ElevenLabs voice library).'),
        api_url: httpUrl.default('https://api.elevenlabs.io').describe('The ElevenLabs API root.'),
        model_id: z.string().min(1).default('eleven_multilingual_v2').describe('The ElevenLabs model.'),
        timeout_ms: z.number().int().positive().default(30_000).describe('Per speech attempt.'),
        retry_delay_ms: z
          .number()
          .int()
          .min(0)
          .default(1_000)
          .describe('Wait before the second (last) attempt.'),
      })
      .strict()
      .default({
        api_url: 'https://api.elevenlabs.io',
        model_id: 'eleven_multilingual_v2',
        timeout_ms: 30_000,
        retry_delay_ms: 1_000,
      }),
    max_seconds: z
      .number()
      .positive()
      .max(7_200)
      .default(600)
      .describe('Longest voice note taken, in seconds.'),
    max_bytes: z
      .number()
      .int()
      .positive()
      .max(100 * 1024 * 1024)
      .default(20 * 1024 * 1024)
      .describe('Largest audio file taken, in bytes (20 MiB).'),
    long_reply_chars: z
      .number()
      .int()
      .min(100)
      .default(600)
      .describe(
        'Answers longer than this are spoken as their opening sentences and sent in full as text too.',
      ),
  })
  .strict()
  .describe('Voice notes in, spoken replies out (ElevenLabs), and the limits on audio.');
export type VoiceConfig = z.infer<typeof voiceSchema>;

/** `host:port`, `[v6]:port`: one host and port web.fetch may reach though it is private. */
const allowHost = z
  .string()
  .trim()
  .regex(
    /^(\[[0-9a-fA-F:.]+\]|[^\s:/[\]@]+):\d{1,5}$/,
    'entries are host:port, e.g. localhost:8080, 192.168.1.20:80 or [::1]:8080',
  );

export const webSchema = z
  .object({
    allow_hosts: z
      .preprocess(commaList, z.array(allowHost))
      .default([])
      .describe(
        'Private, loopback or link-local `host:port` entries web.fetch may still reach (comma-separated), e.g. `intranet.lan:80,[::1]:3000`.',
      ),
    brave: z
      .object({
        api_key: optionalSecret.describe('Brave Search API key for web.search (used when set).'),
        api_url: httpUrl
          .default('https://api.search.brave.com/res/v1')
          .describe('The Brave Search API root.'),
      })
      .strict()
      .default({ api_url: 'https://api.search.brave.com/res/v1' }),
    searxng: z
      .object({
        url: httpUrl
          .optional()
          .describe(
            'A self-hosted SearXNG for web.search when no Brave key is set (its JSON API must be allowed); `https://user:pass@host` sends Basic auth.',
          ),
      })
      .strict()
      .default({}),
    fetch_max_bytes: z
      .number()
      .int()
      .min(10_000)
      .max(100 * 1024 * 1024)
      .default(5 * 1024 * 1024)
      .describe(
        'web.fetch stops reading a page after this many bytes, counted after decompression (the text so far is kept, cut).',
      ),
    fetch_timeout_ms: z
      .number()
      .int()
      .min(1_000)
      .max(120_000)
      .default(15_000)
      .describe('web.fetch gives up on a page (every redirect included) after this long.'),
    search_timeout_ms: z
      .number()
      .int()
      .min(1_000)
      .max(120_000)
      .default(10_000)
      .describe('web.search gives up on the provider after this long.'),
  })
  .strict()
  .describe('The web skills: search providers, and the limits and exceptions of web.fetch.');
export type WebConfig = z.infer<typeof webSchema>;
