import { fileURLToPath } from 'node:url';
import { LlmSentinel } from './agents/sentinel-llm.ts';
import { TurnEngine } from './agents/turn-engine.ts';
import { ConfigStore, type ResolvedConfig } from './config/index.ts';
import { type Database, type DataDirLock, openDatabase } from './db/index.ts';
import { type JobQueue, PgBossQueue } from './jobs/index.ts';
import { createDbUsageRecorder, createLlmClient } from './llm/index.ts';
import type { LlmClient } from './llm/types.ts';
import { createLogger, type Logger } from './logging/logger.ts';
import { COMPACTION_JOB, EMBED_JOB, enqueueCompaction, registerMemoryJobs } from './memory/background.ts';
import { llmEmbedder, memoriesForContext } from './memory/index.ts';
import { type Sentinel, SkillExecutor } from './skills/executor/index.ts';
import { builtinHandlers } from './skills/handlers/index.ts';
import { SkillRegistry } from './skills/registry/index.ts';
import type { SkillHandler, SkillServices } from './skills/types.ts';

export const BUILTIN_SKILLS_DIR = fileURLToPath(new URL('../skills/', import.meta.url));

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
  jobs: JobQueue;
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
  /** Overrides the LLM client built from config. */
  llm?: LlmClient;
  /** An already-open database (tests); the runtime then does not close it. */
  database?: Database;
  now?: () => Date;
};

export async function createRuntime(initial: ResolvedConfig, options: RuntimeOptions = {}): Promise<Runtime> {
  const config = new ConfigStore(initial);
  const logger =
    options.logger ?? createLogger({ level: initial.log_level, secrets: () => config.get().secrets });
  const opened = options.database ? { database: options.database, lock: null } : await openDatabase(initial);
  const { database, lock } = opened;
  const skills = new SkillRegistry({
    roots: [
      { dir: BUILTIN_SKILLS_DIR, source: 'builtin' },
      { dir: initial.skillsDir, source: 'user' },
    ],
    logger,
  });
  skills.load();
  const handlers = builtinHandlers();
  const llm =
    options.llm ?? createLlmClient(initial, { recorder: createDbUsageRecorder(database, logger), logger });
  const embeddingsConfigured = () => database.hasVector && config.get().roster.roles.embeddings !== undefined;
  const embedder = llmEmbedder(llm);
  const services: SkillServices = {
    database,
    embedder: (text, signal) => (embeddingsConfigured() ? embedder(text, signal) : Promise.resolve(null)),
  };
  const jobs = new PgBossQueue(database, logger);
  await registerMemoryJobs({ database, llm, jobs, config: () => config.get(), logger, now: options.now });
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
    defaultTimeoutMs: initial.limits.skill_timeout_ms,
    now: options.now,
  });
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
    afterTurn: async ({ conversationId }) => {
      const current = config.get();
      if (current.endpoint.provider === 'none' || !current.roster.roles.compaction) return;
      await enqueueCompaction(jobs, conversationId, current.memory.compaction_delay_seconds);
    },
  });
  if (options.watch) {
    config.watch(logger);
    await skills.watch();
    await jobs.start();
  }
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
    jobs,
    close: async () => {
      if (closed) return;
      closed = true;
      await engine.drain();
      if (!options.watch) {
        await jobs
          .drain([COMPACTION_JOB, EMBED_JOB])
          .catch((error) => logger.warn({ err: error }, 'queued jobs did not finish'));
      }
      await jobs.stop();
      config.close();
      await skills.close();
      if (!options.database) await database.close();
      lock?.release();
    },
  };
}
