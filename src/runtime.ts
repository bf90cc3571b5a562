import { type ConverseDeps, LlmSentinel, openTurnIds, TurnEngine, TurnHub } from './agents/index.ts';
import type { HttpApp, WebhookOptions } from './app.ts';
import { backupBeforeMigrations, registerBackupJobs } from './backup/index.ts';
import { createChannelAdapters, deliveryReceipts, Gateway, outboxBacklog } from './channels/index.ts';
import { BUILTIN_SKILLS_DIR, ConfigStore, type ResolvedConfig } from './config/index.ts';
import { type Database, type DataDirLock, openDatabase } from './db/index.ts';
import { StewardError } from './errors.ts';
import {
  type DriveConnector,
  FILES_INDEX_JOB,
  FILES_RECONCILE_JOB,
  FilesService,
  registerFileJobs,
  SKILLS_INDEX_JOB,
  type VaultWatcher,
  watchVaults,
} from './files/index.ts';
import { credentialSecrets, Integrations, OWNER_USER, WebAccess } from './integrations/index.ts';
import { type JobQueue, PgBossQueue } from './jobs/index.ts';
import type { LlmClient } from './llm/index.ts';
import { createDbUsageRecorder, createLlmClient } from './llm/index.ts';
import { createLogger, type Logger } from './logging/index.ts';
import { McpServers } from './mcp/index.ts';
import {
  COMPACTION_JOB,
  EMBED_JOB,
  enqueueCompaction,
  llmEmbedder,
  memoriesForContext,
  registerMemoryJobs,
} from './memory/index.ts';
import { Observability } from './observability/index.ts';
import { startRecoverySweep } from './recovery-sweep.ts';
import { createSsrfGuard, InboundRateLimiter } from './security/index.ts';
import type { SkillHandler, SkillServices } from './skills/index.ts';
import {
  learnedSkillsFor,
  loadBuiltinHandlers,
  type Sentinel,
  SkillExecutor,
  SkillRegistry,
  sharedSkills,
} from './skills/index.ts';
import { systemTimezone } from './users/index.ts';
import { VoiceService } from './voice/index.ts';
import { WorkflowScheduler } from './workflows/index.ts';

export { BUILTIN_SKILLS_DIR };

/** Everything a running Steward process holds, built once and closed once. */
export type Runtime = {
  config: ConfigStore;
  logger: Logger;
  database: Database;
  lock: DataDirLock | null;
  skills: SkillRegistry;
  handlers: Map<string, SkillHandler>;
  services: SkillServices;
  executor: SkillExecutor;
  llm: LlmClient;
  engine: TurnEngine;
  /** Every turn's events, by turn id (the dashboard's live traces). */
  turnEvents: TurnHub;
  jobs: JobQueue;
  /** The channel gateway: inbound processing, the outbox, pairing, deliver(). */
  channels: Gateway;
  /** Metrics, traces, alerts and spend caps. */
  observability: Observability;
  integrations: Integrations;
  /** The configured MCP servers, as skill domains. */
  mcp: McpServers;
  /** Schedules from skill frontmatter, scheduled workflow runs, `steward schedules`. */
  workflows: WorkflowScheduler;
  /** Voice notes in (transcription) and spoken replies out (ElevenLabs). */
  voice: VoiceService;
  /** The front door of every chat surface: `converse(runtime.converse, message)`. */
  converse: ConverseDeps;
  /**
   * The HTTP app `steward start` serves (tests call `app.request()` on it) and its lifecycle,
   * built on the first call: a one-shot command never loads the server, dashboard and routes.
   */
  http(): Promise<HttpApp>;
  close(): Promise<void>;
};

export type RuntimeOptions = {
  /**
   * A long-running process: watch the config file and skill roots, and run job workers. A
   * one-shot process instead runs its queued jobs (compaction) in `close()` before it exits.
   */
  watch?: boolean;
  logger?: Logger;
  /** Overrides the sentinel built from config (null: none). */
  sentinel?: Sentinel | null;
  /** Serve Prometheus metrics (default: when `watch`, i.e. a server). */
  metrics?: boolean;
  /** Overrides the LLM client built from config. */
  llm?: LlmClient;
  /** Resolves each user's Google Drive connection for files.sync (none: Drive is not connected). */
  drive?: DriveConnector;
  /** An already-open database (tests); the runtime then does not close it. */
  database?: Database;
  now?: () => Date;
  /** How long `close()` lets running turns finish before stopping them (default 30 s). */
  shutdownGraceMs?: number;
  /** MCP servers to connect at start (default: all configured); a one-shot command names only those it needs. */
  mcpServers?: readonly string[];
  /** The webhook routes' limiter, verification listener and logger (default: production limits, the metrics, `logger`). */
  webhooks?: WebhookOptions;
  /** The log file the dashboard's Logs page tails (default: the data dir's, when `logs.file` is on). */
  logFile?: string;
};

export async function createRuntime(initial: ResolvedConfig, options: RuntimeOptions = {}): Promise<Runtime> {
  const config = new ConfigStore(initial);
  const logger =
    options.logger ??
    createLogger({
      level: initial.log_level,
      secrets: () => [...config.get().secrets, ...credentialSecrets()],
    });
  // Pending migrations of an upgrade run after a backup they can be undone with.
  const beforeMigrate = backupBeforeMigrations({
    dataDir: initial.dataDir,
    skillsDir: initial.skillsDir,
    keep: initial.backup.keep,
    report: (line, file) => logger.warn({ backup: file }, line),
  });
  const opened = options.database
    ? { database: options.database, lock: null }
    : await openDatabase(initial, { beforeMigrate });
  const { database, lock } = opened;
  const skills = new SkillRegistry({
    roots: [
      { dir: BUILTIN_SKILLS_DIR, source: 'builtin' },
      { dir: initial.skillsDir, source: 'user' },
    ],
    logger,
    pollMs: initial.skills_poll_seconds * 1000,
  });
  skills.load();
  const handlers = await loadBuiltinHandlers();
  // Alerts and metrics read parts built further down (the job queue, the executor, the
  // channels); each is reached through a function
  // called only when an alert goes out or metrics are scraped. An alert raised before the
  // channels exist fails its owner-chat attempt with a clear reason and is retried.
  let ownerChannel: Gateway | null = null;
  const integrations = new Integrations({ database, config: () => config.get() });
  const observability = await Observability.create({
    config: () => config.get(),
    database,
    logger,
    metrics: options.metrics ?? options.watch ?? false,
    secrets: credentialSecrets,
    now: options.now,
    seams: {
      // Alerts by email go out through the owner's connected mailbox (alerts.email_to says where).
      sendEmail: async ({ to, subject, text }) => {
        const mailbox = await integrations.email(OWNER_USER);
        if (!mailbox.ok) throw new Error(`no mailbox to send alerts from: ${mailbox.reason}`);
        try {
          await mailbox.provider.send({ to: [to], subject, text });
        } finally {
          await mailbox.provider.close().catch(() => undefined);
        }
      },
      // Owner alerts go to the owner's primary chat channel, through the outbox.
      deliverToOwner: async (text) => {
        if (!ownerChannel) throw new StewardError('channels_not_started', 'the channels are not started yet');
        await ownerChannel.deliver(OWNER_USER, text, { source: 'alert' });
      },
    },
    metricsSources: {
      queueDepths: () => jobs.depths(),
      breakerStates: () => executor.breakers.states(),
      isKnownSkill: (name) => skills.snapshot().skills.has(name),
      outboxBacklog: () => outboxBacklog(database),
    },
  });
  const mcp = new McpServers({
    servers: initial.mcp_servers,
    handlers,
    onChange: () => skills.refresh(),
    logger,
    callTimeoutMs: () => config.get().limits.skill_timeout_ms,
  });
  skills.addProvider(mcp);
  await mcp.start(options.mcpServers);
  const llm =
    options.llm ??
    createLlmClient(initial, {
      recorder: observability.recorder(createDbUsageRecorder(database, logger)),
      onFallback: observability.onFallback,
      logger,
    });
  const embeddingsConfigured = () => database.hasVector && config.get().roster.roles.embeddings !== undefined;
  const embedder = llmEmbedder(llm);
  // Cron schedules fire in the long-running process; a one-shot one only stores them.
  const jobs = new PgBossQueue(database, logger, {
    onFailure: observability.onJobFailure,
    cron: options.watch === true,
  });
  await registerMemoryJobs({
    database,
    llm,
    jobs,
    config: () => config.get(),
    logger,
    openTurnIds,
    now: options.now,
  });
  // The content index of skill pages is shared by every user: no user's own workflow in it.
  const skillPages = () =>
    sharedSkills(skills.snapshot()).map((skill) => ({
      name: skill.name,
      description: skill.description,
      body: skill.body,
    }));
  const files = new FilesService({
    skillPages,
    database,
    dataDir: initial.dataDir,
    jobs,
    settings: () => {
      const current = config.get().files;
      return {
        maxReadBytes: current.max_read_bytes,
        maxIndexBytes: current.max_index_bytes,
        ...(current.drive_folder_id ? { driveFolderId: current.drive_folder_id } : {}),
      };
    },
    // files.sync reaches each user's Drive through their connected Google account.
    drive:
      options.drive ??
      (async (userId) => {
        const auth = await integrations.googleAuth(userId);
        if (!auth) return null;
        const rootUrl = config.get().google.api_url;
        return { auth, ...(rootUrl ? { rootUrl } : {}) };
      }),
    onQuarantine: (record) =>
      observability.alerts.raise({
        severity: 'error',
        key: `files-quarantine:${record.id}`,
        title: 'A file operation was set aside',
        detail: `user ${record.userId}: a ${record.operation} could be neither completed nor undone; nothing was deleted (see steward doctor)`,
      }),
    logger,
  });
  const services: SkillServices = {
    database,
    integrations,
    files,
    embedder: Object.assign(
      (text: string, signal?: AbortSignal) =>
        embeddingsConfigured() ? embedder(text, signal) : Promise.resolve(null),
      { configured: embeddingsConfigured },
    ),
    fetchUrl: (url, init) => createSsrfGuard({ allow: config.get().security.ssrf_allow }).fetch(url, init),
    web: new WebAccess({ database, settings: () => config.get(), now: options.now }),
    workflows: {
      skillsDir: initial.skillsDir,
      builtinDir: BUILTIN_SKILLS_DIR,
      skills: () => skills.snapshot(),
      reload: () => void skills.load(),
    },
  };
  await registerFileJobs({
    database,
    jobs,
    filesDir: files.filesDir,
    maxIndexBytes: () => config.get().files.max_index_bytes,
    skillPages,
    logger,
    background: options.watch === true,
  });
  await files.prepare();
  const recovered = await files.recoverAll();
  if (recovered.completed + recovered.rolledBack > 0)
    logger.warn(recovered, 'file operations interrupted by a crash were settled');
  let sentinel: Sentinel | null;
  if (options.sentinel !== undefined) sentinel = options.sentinel;
  else if (!initial.sentinel.enabled) {
    logger.warn(
      'the sentinel is disabled (sentinel.enabled: false): confirm-flagged skills run without an independent check',
    );
    sentinel = null;
  } else sentinel = new LlmSentinel(llm, logger);
  const executor = new SkillExecutor({
    database,
    skills: () => skills.snapshot(),
    handlers,
    services,
    logger,
    sentinel,
    unavailableDomains: (userId) => integrations.unavailableDomains(userId),
    defaultTimeoutMs: initial.limits.skill_timeout_ms,
    breaker: { onStateChange: observability.onBreakerChange },
    onSentinelDecision: observability.onSentinelDecision,
    now: options.now,
  });
  const turnEvents = new TurnHub();
  const engine = new TurnEngine({
    database,
    llm,
    executor,
    skills: () => skills.snapshot(),
    handlers,
    config: () => config.get(),
    logger,
    now: options.now,
    memories: ({ userId, text, budgetTokens }) =>
      memoriesForContext(database, userId, text, budgetTokens, { embedder: services.embedder }),
    observe: (event, turn) => {
      observability.observe(event, turn);
      turnEvents.publish(event, turn);
    },
    beforeTurn: observability.beforeTurn,
    unavailableDomains: (userId) => integrations.unavailableDomains(userId),
    afterTurn: async ({ conversationId }) => {
      const current = config.get();
      if (current.endpoint.provider === 'none' || !current.roster.roles.compaction) return;
      await enqueueCompaction(jobs, conversationId, current.memory.compaction_delay_seconds);
    },
  });
  const channelSetup = await createChannelAdapters(initial, logger, { database, config: () => config.get() });
  const voice = new VoiceService({ database, llm, config: () => config.get(), logger, now: options.now });
  const channels = new Gateway({
    voice,
    database,
    jobs,
    engine,
    adapters: channelSetup.adapters,
    problems: channelSetup.problems,
    config: () => config.get(),
    logger,
    now: options.now,
    onDeliveryTrouble: (trouble) => observability.alerts.deliveryRerouted(trouble),
  });
  await channels.register();
  ownerChannel = channels;
  const workflows = new WorkflowScheduler({
    database,
    jobs,
    skills: () => skills.snapshot(),
    engine,
    deliver: (userId, text, deliverOptions) => channels.deliver(userId, text, deliverOptions),
    receipts: (ids) => deliveryReceipts(database, ids),
    onRunFailed: (failure) => observability.alerts.workflowFailed(failure),
    logger,
    now: options.now,
    defaultCatchUpSeconds: () => config.get().workflows.catch_up_seconds,
    reminders: () => {
      const settings = config.get().workflows;
      return {
        enabled: settings.reminders,
        dueTime: settings.reminder_due_time,
        leadMinutes: settings.reminder_lead_minutes,
      };
    },
  });
  await workflows.register();
  observability.metrics?.seed({
    llmModels: Object.entries(initial.roster.roles).flatMap(([role, spec]) =>
      spec ? [spec.model, ...spec.fallbacks].map((model) => ({ role, model })) : [],
    ),
    skills: [...skills.snapshot().skills.keys()],
  });
  let vaultWatcher: VaultWatcher | null = null;
  let stopSweep = () => {};
  if (options.watch) {
    config.watch(logger);
    await skills.watch();
    skills.onChange(
      () => void jobs.enqueue(SKILLS_INDEX_JOB, {}, { singletonKey: 'skills' }).catch(() => {}),
    );
    // Files changed while no server ran are indexed at start (the reconcile pass also indexes the skill pages).
    await jobs.enqueue(FILES_RECONCILE_JOB, {});
    vaultWatcher = await watchVaults(files.filesDir, (vault) => void files.vaultChanged(vault), {
      onError: (error) => logger.warn({ err: error }, 'file watcher error'),
    });
    const backups = await registerBackupJobs({
      database,
      jobs,
      dataDir: initial.dataDir,
      skillsDir: initial.skillsDir,
      settings: () => config.get().backup,
      timezone: systemTimezone(),
      logger,
    });
    config.onChange((next, previous) => {
      if (next.backup.schedule !== previous.backup.schedule) void backups.reschedule();
    });
    await jobs.start();
    for (const [channel, problems] of Object.entries(channelSetup.problems)) {
      for (const problem of problems ?? []) logger.warn({ channel }, problem);
    }
    await channels.start();
    stopSweep = startRecoverySweep({ engine, channels, logger });
    if (initial.workflows.enabled) {
      skills.onChange((snapshot) => {
        workflows.sync(snapshot).catch((error) => logger.error({ err: error }, 'schedules not updated'));
      });
      await workflows.start();
    }
  }
  const converse: ConverseDeps = {
    engine,
    database,
    // One limit for every way a message comes in over HTTP (API, dashboard chat, /v1, voice).
    rateLimit: new InboundRateLimiter(database, () => config.get().limits),
  };
  let http: Promise<HttpApp> | null = null;
  const buildHttp = async (): Promise<HttpApp> =>
    (await import('./app.ts')).createApp(
      {
        config,
        logger,
        database,
        converse,
        turnEvents,
        llm,
        channels,
        workflows,
        voice,
        skills,
        handlers,
        executor,
        observability,
        learned: learnedSkillsFor(services),
        integrations,
      },
      { webhooks: options.webhooks, ...(options.logFile ? { logFile: options.logFile } : {}) },
    );
  let closed = false;
  return {
    config,
    logger,
    database,
    lock,
    skills,
    handlers,
    services,
    executor,
    llm,
    engine,
    turnEvents,
    jobs,
    channels,
    observability,
    integrations,
    mcp,
    workflows,
    voice,
    converse,
    http: () => {
      http ??= buildHttp();
      return http;
    },
    close: async () => {
      if (closed) return;
      closed = true;
      stopSweep();
      workflows.stop();
      await channels.stop();
      await engine.shutdown(options.shutdownGraceMs ?? 30_000);
      if (!options.watch) {
        await jobs
          .drain([COMPACTION_JOB, EMBED_JOB, FILES_INDEX_JOB])
          .catch((error) => logger.warn({ err: error }, 'queued jobs did not finish'));
      }
      await vaultWatcher?.close();
      await jobs.stop();
      await observability.close();
      await mcp.close();
      config.close();
      await skills.close();
      if (!options.database) await database.close();
      lock?.release();
    },
  };
}
