import type { ResolvedConfig } from '../config/index.ts';
import type { Database } from '../db/index.ts';
import type { JobQueue } from '../jobs/index.ts';
import type { LlmClient } from '../llm/index.ts';
import type { Logger } from '../logging/index.ts';
import { systemTimezone } from '../users/index.ts';
import { compactConversation, type OpenTurnIds } from './compaction.ts';
import {
  buildVectorIndexes,
  decayAndArchive,
  embedPendingMemories,
  recordEntities,
  saveMemory,
} from './store/index.ts';

export const COMPACTION_JOB = 'memory.compaction';
export const EMBED_JOB = 'memory.embed';
export const LIFECYCLE_JOB = 'memory.lifecycle';
export const VECTOR_INDEX_JOB = 'memory.vector_index';
export const VACUUM_JOB = 'maintenance.vacuum';

export type MemoryJobDeps = {
  database: Database;
  llm: LlmClient;
  jobs: JobQueue;
  config: () => ResolvedConfig;
  logger: Logger;
  /** Which of a conversation's turns have not ended: compaction never reads past one. */
  openTurnIds: OpenTurnIds;
  now?: () => Date;
};

/**
 * Registers the memory system's background work: compaction after turns, embedding of new and
 * changed memories (never on the request path), the daily decay/archive pass, and on PGlite
 * (no autovacuum) a daily VACUUM ANALYZE.
 */
export async function registerMemoryJobs(deps: MemoryJobDeps): Promise<void> {
  const { database, llm, jobs, logger } = deps;
  const now = deps.now ?? (() => new Date());
  const embeddingsOn = () => database.hasVector && deps.config().roster.roles.embeddings !== undefined;

  await jobs.register<{ conversationId: string }>(
    COMPACTION_JOB,
    async (data, context) => {
      await compactConversation(
        {
          database,
          llm,
          logger,
          budgetTokens: () => deps.config().memory.summary_budget_tokens,
          historyBudgetTokens: () => deps.config().memory.history_budget_tokens,
          openTurnIds: deps.openTurnIds,
          saveMemory: async ({ userId, conversationId, memory }) => {
            const saved = await saveMemory(database, userId, {
              content: memory.content,
              category: memory.category,
              tags: memory.tags,
              importance: memory.importance,
              sourceType: 'compaction',
              conversationId,
            });
            if (memory.entities.length > 0) {
              await recordEntities(database, userId, {
                memoryId: saved.memory.id,
                conversationId,
                entities: memory.entities,
                relations: memory.relations,
              });
            }
            if (embeddingsOn()) await jobs.enqueue(EMBED_JOB, {}, { singletonKey: 'all' });
          },
        },
        data.conversationId,
        context.signal,
      );
    },
    { retryLimit: 5, retryDelaySeconds: 5, retryBackoff: true, singletonPerKey: true, expireInSeconds: 300 },
  );

  await jobs.register(
    EMBED_JOB,
    async (_data, context) => {
      if (!embeddingsOn()) return;
      const embedded = await embedPendingMemories(database, llm, { signal: context.signal });
      if (embedded) {
        logger.debug({ embedded }, 'memories embedded');
        await jobs.enqueue(VECTOR_INDEX_JOB, {}, { singletonKey: 'all' });
      }
    },
    { retryLimit: 5, retryDelaySeconds: 10, retryBackoff: true, singletonPerKey: true },
  );

  // HNSW indexes for vector search, once a dimension count has enough embeddings (the first
  // build, at 5,000, takes seconds; the index then grows with each embedding stored).
  await jobs.register(
    VECTOR_INDEX_JOB,
    async () => {
      for (const index of await buildVectorIndexes(database)) logger.info(index, 'memory vector index built');
    },
    { retryLimit: 2, retryDelaySeconds: 60, singletonPerKey: true },
  );

  await jobs.register(LIFECYCLE_JOB, async () => {
    const memory = deps.config().memory;
    const result = await decayAndArchive(database, {
      now: now(),
      halfLifeDays: memory.decay_half_life_days,
      archiveBelow: memory.archive_below_importance,
      minAgeDays: memory.archive_after_days,
    });
    logger.info(result, 'memory lifecycle pass');
  });
  await jobs.schedule(LIFECYCLE_JOB, '15 3 * * *', {}, systemTimezone());
  await jobs.schedule(EMBED_JOB, '*/10 * * * *', {}, 'UTC');
  if (database.hasVector) await jobs.schedule(VECTOR_INDEX_JOB, '7 * * * *', {}, 'UTC');

  if (database.backend === 'pglite') {
    await jobs.register(VACUUM_JOB, async () => {
      await database.exec('VACUUM ANALYZE');
    });
    await jobs.schedule(VACUUM_JOB, '45 3 * * *', {}, systemTimezone());
  }
}

/** Queues the compaction of a conversation after a turn (one queued job per conversation). */
export async function enqueueCompaction(
  jobs: JobQueue,
  conversationId: string,
  delaySeconds: number,
): Promise<void> {
  await jobs.enqueue(
    COMPACTION_JOB,
    { conversationId },
    { singletonKey: conversationId, startAfterSeconds: delaySeconds },
  );
}
