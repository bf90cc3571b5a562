import { Hono } from 'hono';
import type { ConverseDeps, TurnHub } from './agents/index.ts';
import { dataRoutes } from './backup/index.ts';
import {
  channelApiRoutes,
  type FailureLimiter,
  type Gateway,
  pendingPairings,
  webhookRoutes,
} from './channels/index.ts';
import type { ConfigStore } from './config/index.ts';
import type { Database } from './db/index.ts';
import { calendarFeedRoutes, type Integrations } from './integrations/index.ts';
import type { LlmClient } from './llm/index.ts';
import { type Logger, logFilePath } from './logging/index.ts';
import { mcpHttpRoutes } from './mcp/index.ts';
import { memoryImportRoutes } from './memory/index.ts';
import type { Observability } from './observability/index.ts';
import {
  type AuthEnv,
  accountRoutes,
  chatRoutes,
  createServerApp,
  HttpLifecycle,
  OWNER_USER,
  runRoutes,
  tokenRoutes,
  usageRoutes,
  voiceRoutes,
} from './server/index.ts';
import {
  type LearnedSkills,
  type SkillExecutor,
  type SkillHandler,
  type SkillRegistry,
  skillApiRoutes,
} from './skills/index.ts';
import { ensureUser } from './users/index.ts';
import type { VoiceService } from './voice/index.ts';
import { dashboardApiRoutes, notFoundPage, webRoutes } from './web/index.ts';
import { scheduleApiRoutes, type WorkflowScheduler } from './workflows/index.ts';

/** What the HTTP app serves, all built by the composition root (createRuntime). */
export type AppParts = {
  config: ConfigStore;
  logger: Logger;
  database: Database;
  /** The front door every chat surface goes through (engine, database, the per-user inbound limit). */
  converse: ConverseDeps;
  turnEvents: TurnHub;
  /** The model itself (the /v1 clients' housekeeping requests are answered without a turn). */
  llm: LlmClient;
  channels: Gateway;
  workflows: WorkflowScheduler;
  voice: VoiceService;
  skills: SkillRegistry;
  handlers: ReadonlyMap<string, SkillHandler>;
  executor: SkillExecutor;
  observability: Observability;
  learned: LearnedSkills | null;
  /** Connected accounts (`POST /api/accounts/connect`, what `steward connect` relays to). */
  integrations: Integrations;
};

export type WebhookOptions = {
  /** Refuses senders after repeated bad signatures (default: the production limits). */
  limiter?: FailureLimiter;
  /** Told of every webhook's signature check (default: the metrics). */
  onVerification?: (channel: string, result: 'verified' | 'rejected') => void;
  /** Where webhook requests are logged (default: the runtime's logger). */
  logger?: Logger;
};

export type AppOptions = {
  webhooks?: WebhookOptions;
  /** The log file the owner's Logs page tails (default: the data dir's, when `logs.file` is on). */
  logFile?: string;
};

/** The HTTP app and what drains it on shutdown (new requests get 503 while running turns finish). */
export type HttpApp = { app: Hono; lifecycle: HttpLifecycle };

/**
 * The HTTP app `steward start` serves and tests call with `app.request()`: the API under
 * /api (token), webhooks, the dashboard and /v1, MCP, metrics and the calendar feeds.
 */
export function createApp(parts: AppParts, options: AppOptions = {}): HttpApp {
  const { config, database, logger, channels } = parts;
  const lifecycle = new HttpLifecycle();
  const settings = () => config.get();
  const { dataDir, skillsDir } = settings();
  const logFile = options.logFile ?? (settings().logs.file ? logFilePath(dataDir) : undefined);
  const api = new Hono<AuthEnv>();
  api.route('/', runRoutes({ database, executor: parts.executor }));
  api.route('/', chatRoutes(parts.converse));
  api.route('/', channelApiRoutes(channels));
  api.route('/', usageRoutes({ database }));
  api.route('/', scheduleApiRoutes(parts.workflows));
  const { learned } = parts;
  if (learned)
    api.route(
      '/',
      skillApiRoutes({
        learned,
        skills: () => parts.skills.snapshot(),
        hasHandler: (handler) => parts.handlers.has(handler),
      }),
    );
  api.route('/', tokenRoutes(database));
  api.route(
    '/',
    accountRoutes({
      database,
      integrations: parts.integrations,
      settings: () => ({ apiUrl: settings().google.api_url, hubspotBaseUrl: settings().hubspot.base_url }),
    }),
  );
  api.route('/', voiceRoutes({ ...parts.converse, voice: parts.voice, config: settings }));
  api.route('/', dashboardApiRoutes(database));
  api.route('/', dataRoutes({ database, dataDir, skillsDir, logger }));
  api.route(
    '/',
    memoryImportRoutes({ database, ownerUser: OWNER_USER, ensureUser: (id) => ensureUser(database, id) }),
  );
  const app = createServerApp({
    database,
    logger,
    config: settings,
    api,
    webhooks: webhookRoutes(channels, {
      logger: options.webhooks?.logger ?? logger,
      ...(options.webhooks?.limiter ? { limiter: options.webhooks.limiter } : {}),
      onVerification:
        options.webhooks?.onVerification ??
        ((channel, result) => parts.observability.webhookReceived(channel, result)),
    }),
    metrics: parts.observability.metrics ?? undefined,
    lifecycle,
    routes: [
      calendarFeedRoutes(database),
      webRoutes({
        ...parts.converse,
        turnEvents: parts.turnEvents,
        config: settings,
        skills: () => parts.skills.snapshot(),
        breakers: () => parts.executor.breakers.states(),
        channels: {
          status: () => channels.status(),
          approvePairing: (code, options) => channels.approvePairing(code, options),
          pending: () => pendingPairings(database, channels.now()),
        },
        schedules: parts.workflows,
        executor: parts.executor,
        reloadSkills: () => parts.workflows.sync(parts.skills.load()),
        llm: parts.llm,
        ...(logFile ? { logFile } : {}),
        ...(learned ? { learned } : {}),
      }),
    ],
    mcp: mcpHttpRoutes({
      database,
      executor: parts.executor,
      skills: () => parts.skills.snapshot(),
      config: settings,
    }),
    notFoundPage: notFoundPage(database),
  });
  return { app, lifecycle };
}
