import { z } from 'zod';
import { alertsSchema, logsSchema, spendSchema, tracingSchema } from './observability-schema.ts';

export const TIERS = ['primary', 'balanced', 'fast', 'cheap'] as const;
export const ROLES = [
  'orchestrator',
  'sub_agent',
  'compaction',
  'sentinel',
  'embeddings',
  'transcription',
] as const;
export type Role = (typeof ROLES)[number];

const price = z.number().nonnegative();

export const modelSchema = z
  .object({
    id: z.string().min(1),
    tier: z.enum(TIERS).default('balanced'),
    context_window: z.number().int().positive().default(128_000),
    /** US dollars per million tokens. */
    pricing: z
      .object({
        input: price.default(0),
        output: price.default(0),
        cache_read: price.default(0),
        cache_write: price.default(0),
      })
      .strict()
      .default({ input: 0, output: 0, cache_read: 0, cache_write: 0 }),
    tools: z.boolean().default(true),
    /** Audio formats the model takes as `input_audio` (unset: any); without `ogg`, voice notes are decoded to WAV. */
    audio_formats: z
      .array(z.enum(['wav', 'mp3', 'ogg', 'flac']))
      .min(1)
      .optional(),
  })
  .strict();
export type ModelSpec = z.infer<typeof modelSchema>;

export const roleSchema = z
  .object({ model: z.string().min(1), fallbacks: z.array(z.string().min(1)).default([]) })
  .strict();
export type RoleSpec = z.infer<typeof roleSchema>;

const channelMode = z.enum(['multi_agent', 'single_loop', 'direct']);

export const limitsSchema = z
  .object({
    skill_timeout_ms: z.number().int().positive().default(30_000),
    sub_agent_max_tool_calls: z.number().int().positive().default(5),
    sub_agent_timeout_ms: z.number().int().positive().default(120_000),
    turn_max_agents: z.number().int().positive().default(8),
    turn_max_skill_calls: z.number().int().positive().default(30),
    turn_max_orchestrator_iterations: z.number().int().positive().default(6),
    conversation_max_skill_calls: z.number().int().positive().default(50),
    conversation_window_ms: z.number().int().positive().default(300_000),
    agent_concurrency: z.number().int().positive().default(4),
    /** Longest message a turn takes; longer ones are refused with a reply saying so. */
    max_message_chars: z.number().int().min(100).max(1_000_000).default(40_000),
    /** Inbound messages one user may send per minute (API and channels; 0 = no limit). */
    inbound_per_user_per_minute: z.coerce.number().int().min(0).default(30),
    /** Inbound messages one chat channel (telegram, slack, …) takes per minute, all senders (0 = no limit). */
    inbound_per_channel_per_minute: z.coerce.number().int().min(0).default(600),
    /** web.search and web.fetch calls one user may make per UTC day (0 = no limit). */
    web_calls_per_user_per_day: z.coerce.number().int().min(0).default(200),
  })
  .strict();
export type Limits = z.infer<typeof limitsSchema>;

export const memorySchema = z
  .object({
    summary_budget_tokens: z.number().int().positive().default(500),
    memory_budget_tokens: z.number().int().positive().default(800),
    history_budget_tokens: z.number().int().positive().default(6_000),
    /** Compaction waits this long after a turn, so quick follow-ups fold in one job. */
    compaction_delay_seconds: z.number().int().min(0).default(2),
    decay_half_life_days: z.number().positive().default(30),
    archive_below_importance: z.number().min(0).max(1).default(0.1),
    archive_after_days: z.number().positive().default(90),
  })
  .strict();

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });
const optionalSecret = z.string().min(1).optional();

/** `STEWARD_ALLOW`: comma-separated `channel:sender` or `channel:sender=USER` entries (or a YAML list). */
const allowList = z.preprocess(
  (value) =>
    typeof value === 'string'
      ? value
          .split(',')
          .map((entry) => entry.trim())
          .filter(Boolean)
      : value,
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
);

export const channelsSchema = z
  .object({
    modes: z.record(z.string(), channelMode).default({}),
    /** Where the platforms reach this server (webhook URLs are built from it). */
    public_url: httpUrl.optional(),
    allow: allowList,
    telegram: z
      .object({
        bot_token: optionalSecret,
        webhook_secret: z
          .string()
          .regex(/^[A-Za-z0-9_-]{1,256}$/, 'use 1-256 characters from A-Z, a-z, 0-9, _ and -')
          .optional(),
        api_root: httpUrl.default('https://api.telegram.org'),
      })
      .strict()
      .default({ api_root: 'https://api.telegram.org' }),
    slack: z
      .object({
        bot_token: optionalSecret,
        signing_secret: optionalSecret,
        api_url: httpUrl.default('https://slack.com/api/'),
      })
      .strict()
      .default({ api_url: 'https://slack.com/api/' }),
    whatsapp: z
      .object({
        access_token: optionalSecret,
        app_secret: optionalSecret,
        verify_token: optionalSecret,
        phone_number_id: z.string().regex(/^\d+$/, 'must be the numeric phone number id').optional(),
        graph_url: httpUrl.default('https://graph.facebook.com/v21.0'),
      })
      .strict()
      .default({ graph_url: 'https://graph.facebook.com/v21.0' }),
    googlechat: z
      .object({
        project_number: z
          .string()
          .regex(/^\d+$/, 'must be the numeric Google Cloud project number')
          .optional(),
        jwks_url: httpUrl.default(
          'https://www.googleapis.com/service_accounts/v1/jwk/chat@system.gserviceaccount.com',
        ),
        api_url: httpUrl.default('https://chat.googleapis.com'),
        /** Path of a service-account JSON key file, for replies posted after the request. */
        service_account: z.string().min(1).optional(),
      })
      .strict()
      .default({
        jwks_url: 'https://www.googleapis.com/service_accounts/v1/jwk/chat@system.gserviceaccount.com',
        api_url: 'https://chat.googleapis.com',
      }),
    discord: z
      .object({
        bot_token: optionalSecret,
        /** The REST API, version included. */
        api_url: httpUrl.default('https://discord.com/api/v10'),
        /** Overrides the Gateway URL `GET /gateway/bot` gives (a local fake, a proxy). */
        gateway_url: z.url({ protocol: /^wss?$/, error: 'must be a ws(s):// URL' }).optional(),
      })
      .strict()
      .default({ api_url: 'https://discord.com/api/v10' }),
    matrix: z
      .object({
        homeserver_url: httpUrl.optional(),
        access_token: optionalSecret,
        user_id: z
          .string()
          .regex(/^@[^:\s]+:\S+$/, "must be the bot account's full Matrix id, e.g. @steward:example.org")
          .optional(),
      })
      .strict()
      .default({}),
    signal: z
      .object({
        /** The signal-cli REST API the user runs (bbernhard/signal-cli-rest-api). */
        cli_url: httpUrl.optional(),
        number: z
          .string()
          .regex(
            /^\+[1-9]\d{5,14}$/,
            "must be the bot account's number in international format, e.g. +4915112345678",
          )
          .optional(),
      })
      .strict()
      .default({}),
    /** `on`: mail to the owner's address (EMAIL_IMAP_URL, EMAIL_SMTP_URL, EMAIL_FROM) becomes turns. */
    email: z.enum(['on', 'off'], { error: 'use on or off' }).default('off'),
    /** How often the email channel reads the inbox when IMAP IDLE brings no news (and renews IDLE). */
    email_poll_seconds: z.coerce.number().int().min(1).max(3600).default(60),
    /** `on`: mail is taken only when the receiving server proves its sender (DMARC, DKIM or SPF pass). */
    email_require_authentication: z.enum(['on', 'off'], { error: 'use on or off' }).default('on'),
  })
  .strict();
export type ChannelsConfig = z.infer<typeof channelsSchema>;

/** The owner's (`local`) mailbox; other users connect theirs with `steward connect email`. */
export const emailSchema = z
  .object({
    imap_url: z
      .string()
      .regex(/^imaps?:\/\/[^/]+/, 'must be imap://user:pass@host:port or imaps://… (TLS)')
      .optional(),
    smtp_url: z
      .string()
      .regex(/^smtps?:\/\/[^/]+/, 'must be smtp://user:pass@host:port or smtps://… (TLS)')
      .optional(),
    from: z.string().min(3).optional(),
  })
  .strict();

/** Google for the owner: a service account (domain-wide delegation) and the API root. */
export const googleSchema = z
  .object({
    application_credentials: z.string().min(1).optional(),
    impersonate: z.string().min(3).optional(),
    api_url: z.url('must be an http(s) URL').optional(),
    /** The OAuth client of `steward connect google` (installed-app flow). */
    client_id: z.string().min(1).optional(),
    client_secret: z.string().min(1).optional(),
  })
  .strict();

export const hubspotSchema = z
  .object({
    access_token: z.string().min(8, 'must be a HubSpot private app access token').optional(),
    base_url: z.url('must be an http(s) URL').optional(),
  })
  .strict();

export const caldavSchema = z
  .object({
    url: z.url('must be https://user:password@host/path of the CalDAV server').optional(),
  })
  .strict();
const SERVER_NAME = /^[a-z][a-z0-9_]*$/;

/**
 * One MCP server (DESIGN §1): a stdio command or a Streamable HTTP URL. Its name is the skill
 * domain its tools appear under. `${VAR}` in `env` and `headers` values reads Steward's
 * environment at start-up, so tokens need not sit in steward.yaml.
 */
export const mcpServerSchema = z
  .object({
    name: z
      .string()
      .regex(
        SERVER_NAME,
        'must be a skill domain name: lower-case letters, digits and _, starting with a letter',
      ),
    command: z.string().min(1).optional(),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
    headers: z.record(z.string(), z.string()).optional(),
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

const commaList = (value: unknown) =>
  typeof value === 'string'
    ? value
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean)
    : value;

export const filesSchema = z
  .object({
    /** files.read refuses larger files (bytes of text). */
    max_read_bytes: z.number().int().positive().default(200_000),
    /** Larger files are indexed by name only. */
    max_index_bytes: z.number().int().positive().default(20_000_000),
    /** The Google Drive folder files.sync mirrors; unset: "Steward" at the top of My Drive. */
    drive_folder_id: z.string().min(1).optional(),
  })
  .strict();

export const workflowsSchema = z
  .object({
    /** Run schedules from skill frontmatter in this process (a server). */
    enabled: z.boolean().default(true),
    /** How late a run missed while Steward was down may still run at start, unless the file sets `catch_up`. */
    catch_up_seconds: z.number().int().min(0).default(3600),
    /** Remind users of tasks due (through their primary channel). */
    reminders: z.boolean().default(true),
    /** The local time a task due on a date counts as due. */
    reminder_due_time: z
      .string()
      .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be a 24-hour time such as 09:00')
      .default('09:00'),
    /** How many minutes before that the reminder goes out (1440: the day before). */
    reminder_lead_minutes: z.number().int().min(0).max(10_080).default(0),
  })
  .strict();
/** Backups into `<data dir>/backups`: on a schedule, and before every upgrade's migrations. */
export const backupSchema = z
  .object({
    /** Cron (five fields, the server's time zone) of scheduled backups; unset: none. */
    schedule: z.string().trim().min(1, 'must be a cron expression such as "0 3 * * *"').optional(),
    /** How many backups `<data dir>/backups` keeps, scheduled and pre-upgrade alike (older ones are removed). */
    keep: z.coerce.number().int().min(1).max(1000).default(7),
  })
  .strict();

/** Voice notes in, spoken replies out (ElevenLabs), and the limits on audio. */
export const voiceSchema = z
  .object({
    elevenlabs: z
      .object({
        api_key: optionalSecret,
        voice_id: z
          .string()
          .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be an ElevenLabs voice id')
          .optional(),
        api_url: httpUrl.default('https://api.elevenlabs.io'),
        model_id: z.string().min(1).default('eleven_multilingual_v2'),
        timeout_ms: z.number().int().positive().default(30_000),
        /** Wait before the second (last) attempt. */
        retry_delay_ms: z.number().int().min(0).default(1_000),
      })
      .strict()
      .default({
        api_url: 'https://api.elevenlabs.io',
        model_id: 'eleven_multilingual_v2',
        timeout_ms: 30_000,
        retry_delay_ms: 1_000,
      }),
    /** Longest voice note taken, in seconds. */
    max_seconds: z.number().positive().max(7_200).default(600),
    /** Largest audio file taken, in bytes. */
    max_bytes: z
      .number()
      .int()
      .positive()
      .max(100 * 1024 * 1024)
      .default(20 * 1024 * 1024),
    /** Answers longer than this are spoken as a summary, with the full text sent too. */
    long_reply_chars: z.number().int().min(100).default(600),
  })
  .strict();
export type VoiceConfig = z.infer<typeof voiceSchema>;

/** `host:port`, `[v6]:port`: one host and port web.fetch may reach though it is private. */
const allowHost = z
  .string()
  .trim()
  .regex(
    /^(\[[0-9a-fA-F:.]+\]|[^\s:/[\]@]+):\d{1,5}$/,
    'entries are host:port, e.g. localhost:8080, 192.168.1.20:80 or [::1]:8080',
  );

/** The web skills: search providers, and the limits and exceptions of web.fetch. */
export const webSchema = z
  .object({
    /** Private, loopback or link-local `host:port`s web.fetch may still reach (tests, an intranet page). */
    allow_hosts: z.preprocess(commaList, z.array(allowHost)).default([]),
    brave: z
      .object({
        api_key: optionalSecret,
        api_url: httpUrl.default('https://api.search.brave.com/res/v1'),
      })
      .strict()
      .default({ api_url: 'https://api.search.brave.com/res/v1' }),
    searxng: z.object({ url: httpUrl.optional() }).strict().default({}),
    /** web.fetch stops reading a page after this many bytes (the text so far is kept, cut). */
    fetch_max_bytes: z
      .number()
      .int()
      .min(10_000)
      .max(100 * 1024 * 1024)
      .default(5 * 1024 * 1024),
    /** web.fetch gives up on a page (every redirect included) after this long. */
    fetch_timeout_ms: z.number().int().min(1_000).max(120_000).default(15_000),
    /** web.search gives up on the provider after this long. */
    search_timeout_ms: z.number().int().min(1_000).max(120_000).default(10_000),
  })
  .strict();
export type WebConfig = z.infer<typeof webSchema>;

/** The whole configuration, after file and environment are merged. Keys are snake_case as in steward.yaml. */
export const configSchema = z
  .object({
    data_dir: z.string().min(1).default('./data'),
    database_url: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
      .optional(),
    /** PostgreSQL connections one instance may open in all (queries, held turn locks, jobs). */
    database_max_connections: z.coerce.number().int().min(12).max(1000).default(30),
    /** On SIGTERM, how long running turns may finish before they are interrupted (resumed after the restart). */
    shutdown_grace_seconds: z.coerce.number().min(0).max(3600).default(25),
    /** Poll the user skills dir every this many seconds instead of relying on change events (0 = events). */
    skills_poll_seconds: z.coerce.number().min(0).max(3600).default(0),
    host: z.string().min(1).default('127.0.0.1'),
    /** Extra Host names the HTTP server answers to (besides loopback, HOST and STEWARD_PUBLIC_URL). */
    allowed_hosts: z
      .preprocess(
        (value) =>
          typeof value === 'string'
            ? value
                .split(',')
                .map((entry) => entry.trim())
                .filter(Boolean)
            : value,
        z.array(z.string().min(1)),
      )
      .default([]),
    port: z.coerce.number().int().min(0).max(65_535).default(3000),
    log_level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    secret_key: z.string().min(16, 'must be at least 16 characters').optional(),
    api_token: z.string().min(16, 'must be at least 16 characters').optional(),
    skills_dir: z.string().min(1).optional(),
    llm: z
      .object({
        base_url: z
          .url({
            protocol: /^https?$/,
            message: 'must be an http(s) URL with its scheme, e.g. http://localhost:11434/v1',
          })
          .optional(),
        api_key: z.string().min(1).optional(),
        /** Sent as OpenRouter's `HTTP-Referer` / `X-Title` attribution headers. */
        app_name: z.string().default('Steward'),
        timeout_ms: z.number().int().positive().default(120_000),
        max_retries: z.number().int().min(0).max(10).default(3),
        models: z.array(modelSchema).default([]),
        roles: z
          .object({
            orchestrator: roleSchema.optional(),
            sub_agent: roleSchema.optional(),
            compaction: roleSchema.optional(),
            sentinel: roleSchema.optional(),
            embeddings: roleSchema.optional(),
            /** Speech to text (default: the orchestrator's model). */
            transcription: roleSchema.optional(),
          })
          .strict()
          .default({}),
      })
      .strict()
      .default({ app_name: 'Steward', timeout_ms: 120_000, max_retries: 3, models: [], roles: {} }),
    channels: channelsSchema.default(channelsSchema.parse({})),
    limits: limitsSchema.default(limitsSchema.parse({})),
    sentinel: z
      .object({ enabled: z.boolean().default(true) })
      .strict()
      .default({ enabled: true }),
    memory: memorySchema.default(memorySchema.parse({})),
    /** Bearer token for GET /metrics when no api_token is set (the api_token also works). */
    metrics_token: z.string().min(16, 'must be at least 16 characters').optional(),
    alerts: alertsSchema.default(alertsSchema.parse({})),
    spend: spendSchema.default({}),
    tracing: tracingSchema.default(tracingSchema.parse({})),
    logs: logsSchema.default(logsSchema.parse({})),
    /** Where people reach this server from outside (feeds, OAuth); default http://HOST:PORT. */
    public_url: z.url('must be an http(s) URL').optional(),
    email: emailSchema.default({}),
    google: googleSchema.default({}),
    hubspot: hubspotSchema.default({}),
    caldav: caldavSchema.default({}),
    files: filesSchema.default(filesSchema.parse({})),
    workflows: workflowsSchema.default(workflowsSchema.parse({})),
    voice: voiceSchema.default(voiceSchema.parse({})),
    web: webSchema.default(webSchema.parse({})),
    backup: backupSchema.default(backupSchema.parse({})),
    mcp_servers: z
      .array(mcpServerSchema)
      .default([])
      .superRefine((servers, ctx) => {
        const seen = new Set<string>();
        servers.forEach((server, index) => {
          if (seen.has(server.name))
            ctx.addIssue({
              code: 'custom',
              path: [index, 'name'],
              message: `"${server.name}" is used twice`,
            });
          seen.add(server.name);
        });
      }),
    replies: z
      .object({
        /**
         * Receipt lines under a reply (`✓ tasks.create — Alpha plan (t_…)`): `auto` writes them on
         * chat channels, the terminal and the dashboard; `off` never. The JSON APIs carry them as
         * data (`receipts`) either way.
         */
        receipts: z.enum(['auto', 'off'], { message: 'must be auto or off' }).default('auto'),
      })
      .strict()
      .default({ receipts: 'auto' }),
    security: z
      .object({
        /** Private, loopback or link-local hosts/ranges the model may still make Steward fetch. */
        ssrf_allow: z.preprocess(commaList, z.array(z.string().min(1))).default([]),
      })
      .strict()
      .default({ ssrf_allow: [] }),
  })
  .strict();

export type Config = z.infer<typeof configSchema>;
export type ChannelMode = z.infer<typeof channelMode>;
