import { z } from 'zod';
import { type channelMode, channelsSchema } from './channels-schema.ts';
import { alertsSchema, logsSchema, spendSchema, tracingSchema } from './observability-schema.ts';
import {
  backupSchema,
  caldavSchema,
  commaList,
  emailSchema,
  filesSchema,
  googleSchema,
  hubspotSchema,
  mcpServerSchema,
  voiceSchema,
  webSchema,
  workflowsSchema,
} from './services-schema.ts';

export type { ChannelsConfig } from './channels-schema.ts';
export type { McpServerConfig, VoiceConfig, WebConfig } from './services-schema.ts';

// Every setting carries a `.describe()`: docs/configuration.md is generated from it
// (`npm run docs:config`), and a test fails when a setting has none.

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
    id: z.string().min(1).describe("The model's id at the endpoint."),
    tier: z.enum(TIERS).default('balanced').describe('What the model is for.'),
    context_window: z.number().int().positive().default(128_000).describe('Tokens the model takes in.'),
    pricing: z
      .object({
        input: price.default(0).describe('US dollars per million prompt tokens.'),
        output: price.default(0).describe('US dollars per million completion tokens.'),
        cache_read: price.default(0).describe('US dollars per million cached prompt tokens read.'),
        cache_write: price.default(0).describe('US dollars per million prompt tokens written to the cache.'),
      })
      .strict()
      .default({ input: 0, output: 0, cache_read: 0, cache_write: 0 }),
    tools: z.boolean().default(true).describe('Whether the model takes tool calls.'),
    audio_formats: z
      .array(z.enum(['wav', 'mp3', 'ogg', 'flac']))
      .min(1)
      .optional()
      .describe(
        'Audio formats the model takes as `input_audio` (unset: any); without `ogg`, voice notes are decoded to WAV.',
      ),
  })
  .strict();
export type ModelSpec = z.infer<typeof modelSchema>;

export const roleSchema = z
  .object({
    model: z.string().min(1).describe("The role's model (an id of `llm.models`)."),
    fallbacks: z
      .array(z.string().min(1))
      .default([])
      .describe('Models tried in order when the model fails its retries.'),
  })
  .strict();
export type RoleSpec = z.infer<typeof roleSchema>;

const positiveInt = () => z.number().int().positive();

export const limitsSchema = z
  .object({
    skill_timeout_ms: positiveInt().default(30_000).describe('Longest one skill call may run.'),
    sub_agent_max_tool_calls: positiveInt().default(5).describe('Tool calls one sub-agent may make.'),
    sub_agent_timeout_ms: positiveInt().default(120_000).describe('Longest one sub-agent may run.'),
    turn_max_agents: positiveInt().default(8).describe('Sub-agents one turn may dispatch.'),
    turn_max_skill_calls: positiveInt().default(30).describe('Skill calls one turn may make.'),
    turn_max_orchestrator_iterations: positiveInt()
      .default(6)
      .describe('LLM calls of the orchestrator in one turn.'),
    conversation_max_skill_calls: positiveInt()
      .default(50)
      .describe('Skill calls one conversation may make per `conversation_window_ms`.'),
    conversation_window_ms: positiveInt()
      .default(300_000)
      .describe('The sliding window of `conversation_max_skill_calls`.'),
    agent_concurrency: positiveInt().default(4).describe('Sub-agents of one turn running at once.'),
    max_message_chars: z
      .number()
      .int()
      .min(100)
      .max(1_000_000)
      .default(40_000)
      .describe('Longest message a turn takes; longer ones are refused with a reply saying so.'),
    inbound_per_user_per_minute: z.coerce
      .number()
      .int()
      .min(0)
      .default(30)
      .describe(
        'Messages one user may send per minute (API and channels; on a channel the sender is the user; 0 = no limit).',
      ),
    inbound_per_channel_per_minute: z.coerce
      .number()
      .int()
      .min(0)
      .default(600)
      .describe(
        'Messages one chat channel (telegram, slack, …) takes per minute, all senders (0 = no limit).',
      ),
    web_calls_per_user_per_day: z.coerce
      .number()
      .int()
      .min(0)
      .default(200)
      .describe('web.search and web.fetch calls one user may make per UTC day (0 = no limit).'),
  })
  .strict()
  .describe(
    'Limits that end every loop and bound every user; a tripped turn limit ends the turn with a report.',
  );
export type Limits = z.infer<typeof limitsSchema>;

export const memorySchema = z
  .object({
    summary_budget_tokens: positiveInt().default(500).describe('Hard budget of the running summary.'),
    memory_budget_tokens: positiveInt().default(800).describe("Memories in the orchestrator's context."),
    history_budget_tokens: positiveInt()
      .default(6_000)
      .describe(
        "Recent history in the orchestrator's context; over it, the oldest turns are folded into the summary.",
      ),
    compaction_delay_seconds: z
      .number()
      .int()
      .min(0)
      .default(2)
      .describe('Compaction waits this long after a turn, so quick follow-ups fold in one job.'),
    decay_half_life_days: z
      .number()
      .positive()
      .default(30)
      .describe("An unused memory's importance halves in this many days."),
    archive_below_importance: z
      .number()
      .min(0)
      .max(1)
      .default(0.1)
      .describe(
        'Memories below this importance, unused for `archive_after_days`, are archived (never deleted).',
      ),
    archive_after_days: z.number().positive().default(90).describe('See `archive_below_importance`.'),
  })
  .strict()
  .describe('Conversation summaries and long-term memory.');

const minToken = (what: string) =>
  z.string().min(16, 'must be at least 16 characters').optional().describe(what);

export const configSchema = z
  .object({
    data_dir: z
      .string()
      .min(1)
      .default('./data')
      .describe('Data directory: embedded database (`db/`), user skills, files, logs, lock file.'),
    database_url: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
      .optional()
      .describe('A PostgreSQL server (`postgres://…`); unset: the embedded PGlite in `<data dir>/db`.'),
    database_max_connections: z.coerce
      .number()
      .int()
      .min(12)
      .max(1000)
      .default(30)
      .describe(
        "PostgreSQL connections one instance opens at most (queries, held turn locks, jobs); all instances together must fit the server's `max_connections`.",
      ),
    shutdown_grace_seconds: z.coerce
      .number()
      .min(0)
      .max(3600)
      .default(25)
      .describe(
        'On SIGTERM, how long running turns may finish before they are interrupted (resumed after the restart).',
      ),
    skills_poll_seconds: z.coerce
      .number()
      .min(0)
      .max(3600)
      .default(0)
      .describe(
        'Poll the user skills dir every this many seconds instead of relying on change events (a network volume shared by instances; 0 = events).',
      ),
    host: z
      .string()
      .min(1)
      .default('127.0.0.1')
      .describe('Listen address; a non-loopback address requires `api_token`.'),
    allowed_hosts: z
      .preprocess(commaList, z.array(z.string().min(1)))
      .default([])
      .describe(
        'Extra Host names the HTTP server answers to (besides loopback, `host` and `public_url`), comma-separated.',
      ),
    port: z.coerce.number().int().min(0).max(65_535).default(3000).describe('Listen port.'),
    log_level: z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
      .default('info')
      .describe('Lowest level logged.'),
    secret_key: minToken(
      'Key that encrypts stored credentials; unset: a key generated in `<data dir>/secret.key` (several instances need the same key).',
    ),
    api_token: minToken('Bearer token required on `/api`, `/v1`, `/mcp` and the dashboard login.'),
    skills_dir: z.string().min(1).optional().describe('User skills directory (default `<data dir>/skills`).'),
    llm: z
      .object({
        base_url: z
          .url({
            protocol: /^https?$/,
            message: 'must be an http(s) URL with its scheme, e.g. http://localhost:11434/v1',
          })
          .optional()
          .describe('Any OpenAI-compatible endpoint (Ollama, vLLM, LM Studio, OpenAI, OpenRouter).'),
        api_key: z.string().min(1).optional().describe('Key for the endpoint.'),
        app_name: z
          .string()
          .default('Steward')
          .describe("Sent as OpenRouter's `HTTP-Referer` / `X-Title` attribution headers."),
        timeout_ms: positiveInt().default(120_000).describe('Per LLM request.'),
        max_retries: z
          .number()
          .int()
          .min(0)
          .max(10)
          .default(3)
          .describe('Retries of 429 / 5xx / timeouts / malformed responses before the fallback model.'),
        models: z
          .array(modelSchema)
          .default([])
          .describe('The model roster (OpenRouter defaults when OpenRouter is used, else none).'),
        roles: z
          .object({
            orchestrator: roleSchema.optional().describe('Plans each request and answers.'),
            sub_agent: roleSchema.optional().describe('Runs one mission with its granted skills.'),
            compaction: roleSchema
              .optional()
              .describe('Folds history into the summary and extracts memories.'),
            sentinel: roleSchema.optional().describe('Checks mutating actions against the request.'),
            embeddings: roleSchema.optional().describe('Embeds memories for vector search.'),
            transcription: roleSchema
              .optional()
              .describe("Speech to text (default: the orchestrator's model)."),
          })
          .strict()
          .default({}),
      })
      .strict()
      .default({ app_name: 'Steward', timeout_ms: 120_000, max_retries: 3, models: [], roles: {} })
      .describe(
        'The LLM endpoint, its models and which model each role uses. A role is `{model, fallbacks}`: an id of `llm.models`, and the ids tried in order when it fails its retries.',
      ),
    channels: channelsSchema.default(channelsSchema.parse({})),
    limits: limitsSchema.default(limitsSchema.parse({})),
    sentinel: z
      .object({
        enabled: z
          .boolean()
          .default(true)
          .describe('The independent check of confirm-flagged actions (off is warned at start).'),
      })
      .strict()
      .default({ enabled: true }),
    memory: memorySchema.default(memorySchema.parse({})),
    metrics_token: minToken('Bearer token that also opens `GET /metrics` (the API token always does).'),
    alerts: alertsSchema.default(alertsSchema.parse({})),
    spend: spendSchema.default({}),
    tracing: tracingSchema.default(tracingSchema.parse({})),
    logs: logsSchema.default(logsSchema.parse({})),
    public_url: z
      .url('must be an http(s) URL')
      .optional()
      .describe(
        'Where people and chat platforms reach this server (webhooks, `calendar.feed`, OAuth, voice audio); default `http://HOST:PORT`.',
      ),
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
      })
      .describe('MCP servers as skill domains: `{name, command, args?, env?}` or `{name, url, headers?}`.'),
    replies: z
      .object({
        receipts: z
          .enum(['auto', 'off'], { message: 'must be auto or off' })
          .default('auto')
          .describe(
            'Receipt lines under a reply (`✓`/`✗`/`?` per effect): `auto` on chat channels, the terminal, the dashboard and scheduled runs; `off` never. The JSON APIs carry `receipts` as data either way.',
          ),
      })
      .strict()
      .default({ receipts: 'auto' }),
    security: z
      .object({
        ssrf_allow: z
          .preprocess(commaList, z.array(z.string().min(1)))
          .default([])
          .describe(
            'Host names or CIDR ranges (comma-separated) the model may make Steward fetch although they are private.',
          ),
      })
      .strict()
      .default({ ssrf_allow: [] }),
  })
  .strict()
  .describe(
    'The whole configuration, after file and environment are merged. Keys are snake_case as in steward.yaml.',
  );

export type Config = z.infer<typeof configSchema>;
export type ChannelMode = z.infer<typeof channelMode>;
