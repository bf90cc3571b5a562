import { z } from 'zod';

export const TIERS = ['primary', 'balanced', 'fast', 'cheap'] as const;
export const ROLES = ['orchestrator', 'sub_agent', 'compaction', 'sentinel', 'embeddings'] as const;
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

/** The whole configuration, after file and environment are merged. Keys are snake_case as in steward.yaml. */
export const configSchema = z
  .object({
    data_dir: z.string().min(1).default('./data'),
    database_url: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
      .optional(),
    host: z.string().min(1).default('127.0.0.1'),
    port: z.coerce.number().int().min(0).max(65_535).default(3000),
    log_level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    secret_key: z.string().min(16, 'must be at least 16 characters').optional(),
    api_token: z.string().min(16, 'must be at least 16 characters').optional(),
    skills_dir: z.string().min(1).optional(),
    llm: z
      .object({
        base_url: z.url('must be an http(s) URL').optional(),
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
          })
          .strict()
          .default({}),
      })
      .strict()
      .default({ app_name: 'Steward', timeout_ms: 120_000, max_retries: 3, models: [], roles: {} }),
    channels: z
      .object({
        modes: z.record(z.string(), channelMode).default({}),
      })
      .strict()
      .default({ modes: {} }),
    limits: limitsSchema.default(limitsSchema.parse({})),
    sentinel: z
      .object({ enabled: z.boolean().default(true) })
      .strict()
      .default({ enabled: true }),
    memory: memorySchema.default(memorySchema.parse({})),
  })
  .strict();

export type Config = z.infer<typeof configSchema>;
export type ChannelMode = z.infer<typeof channelMode>;
