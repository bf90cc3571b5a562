/**
 * The Drizzle schema: one description of the tables for both backends. The SQL in
 * `migrations/` creates them; keep the two in step (test/db-schema.test.ts compares them).
 */
import { sql } from 'drizzle-orm';
import {
  type AnyPgColumn,
  bigint,
  boolean,
  check,
  customType,
  date,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  real,
  text,
  timestamp,
  unique,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

const createdAt = () => timestamp('created_at', { withTimezone: true }).notNull().defaultNow();

export const users = pgTable('users', {
  id: text('id').primaryKey(),
  displayName: text('display_name'),
  timezone: text('timezone').notNull().default('UTC'),
  createdAt: createdAt(),
});

export const channelIdentities = pgTable(
  'channel_identities',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    channel: text('channel').notNull(),
    externalId: text('external_id').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('channel_identities_channel_external_key').on(t.channel, t.externalId)],
);

export const conversations = pgTable(
  'conversations',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    channel: text('channel').notNull(),
    /** Overrides the channel's mode when set. */
    mode: text('mode'),
    title: text('title'),
    summary: text('summary').notNull().default(''),
    summaryVersion: integer('summary_version').notNull().default(0),
    summaryModel: text('summary_model'),
    summaryUpdatedAt: timestamp('summary_updated_at', { withTimezone: true }),
    summaryThroughMessageId: bigint('summary_through_message_id', { mode: 'number' }).notNull().default(0),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('conversations_user_idx').on(t.userId, t.updatedAt)],
);

export const turns = pgTable(
  'turns',
  {
    id: text('id').primaryKey(),
    conversationId: text('conversation_id')
      .notNull()
      .references(() => conversations.id),
    userId: text('user_id').notNull(),
    /** running | completed | paused | interrupted | failed */
    status: text('status').notNull(),
    mode: text('mode').notNull(),
    userMessageId: bigint('user_message_id', { mode: 'number' }),
    reply: text('reply'),
    stopReason: text('stop_reason'),
    error: text('error'),
    /** What a paused turn needs to resume (pending command, progress report). */
    state: jsonb('state'),
    promptTokens: integer('prompt_tokens').notNull().default(0),
    cachedTokens: integer('cached_tokens').notNull().default(0),
    cacheWriteTokens: integer('cache_write_tokens').notNull().default(0),
    completionTokens: integer('completion_tokens').notNull().default(0),
    cost: doublePrecision('cost').notNull().default(0),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull().defaultNow(),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
  },
  (t) => [
    index('turns_conversation_idx').on(t.conversationId, t.startedAt),
    index('turns_status_idx').on(t.status),
  ],
);

export const messages = pgTable(
  'messages',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    conversationId: text('conversation_id')
      .notNull()
      .references(() => conversations.id),
    userId: text('user_id').notNull(),
    turnId: text('turn_id'),
    /** user | assistant | tool | system */
    role: text('role').notNull(),
    content: text('content').notNull().default(''),
    toolCalls: jsonb('tool_calls'),
    toolCallId: text('tool_call_id'),
    tokenCount: integer('token_count').notNull().default(0),
    channel: text('channel'),
    channelMessageId: text('channel_message_id'),
    createdAt: createdAt(),
  },
  (t) => [
    index('messages_conversation_idx').on(t.conversationId, t.id),
    uniqueIndex('messages_channel_message_key')
      .on(t.channel, t.channelMessageId)
      .where(sql`channel_message_id IS NOT NULL`),
  ],
);

export const skillExecutions = pgTable(
  'skill_executions',
  {
    id: text('id').primaryKey(),
    /** The agent row this call ran under (null for the orchestrator or the CLI). */
    parentId: text('parent_id'),
    turnId: text('turn_id'),
    userId: text('user_id').notNull(),
    conversationId: text('conversation_id'),
    /** 'agent' for a sub-agent, 'skill' for one skill call. */
    kind: text('kind').notNull(),
    agentId: text('agent_id'),
    mission: text('mission'),
    skill: text('skill'),
    command: text('command'),
    flags: jsonb('flags'),
    dependsOn: jsonb('depends_on'),
    /** running | ok | error | refused | skipped | timeout */
    status: text('status').notNull(),
    result: text('result'),
    error: text('error'),
    transcript: jsonb('transcript'),
    usage: jsonb('usage'),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull().defaultNow(),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
    durationMs: integer('duration_ms'),
  },
  (t) => [
    index('skill_executions_turn_idx').on(t.turnId),
    index('skill_executions_parent_idx').on(t.parentId),
  ],
);

export const llmCalls = pgTable(
  'llm_calls',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    turnId: text('turn_id'),
    executionId: text('execution_id'),
    conversationId: text('conversation_id'),
    userId: text('user_id'),
    role: text('role').notNull(),
    model: text('model').notNull(),
    promptTokens: integer('prompt_tokens').notNull().default(0),
    cachedTokens: integer('cached_tokens').notNull().default(0),
    cacheWriteTokens: integer('cache_write_tokens').notNull().default(0),
    completionTokens: integer('completion_tokens').notNull().default(0),
    cost: doublePrecision('cost').notNull().default(0),
    latencyMs: integer('latency_ms').notNull().default(0),
    errorClass: text('error_class'),
    error: text('error'),
    createdAt: createdAt(),
  },
  (t) => [index('llm_calls_turn_idx').on(t.turnId)],
);

export const skillCircuitBreakers = pgTable('skill_circuit_breakers', {
  skill: text('skill').primaryKey(),
  /** closed | open | half_open */
  state: text('state').notNull(),
  consecutiveFailures: integer('consecutive_failures').notNull().default(0),
  openedAt: timestamp('opened_at', { withTimezone: true }),
  lastError: text('last_error'),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

export const sentinelDecisions = pgTable(
  'sentinel_decisions',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    executionId: text('execution_id'),
    turnId: text('turn_id'),
    userId: text('user_id').notNull(),
    skill: text('skill').notNull(),
    command: text('command').notNull(),
    mission: text('mission'),
    originalRequest: text('original_request'),
    approved: boolean('approved').notNull(),
    reasoning: text('reasoning').notNull(),
    model: text('model'),
    createdAt: createdAt(),
  },
  (t) => [index('sentinel_decisions_turn_idx').on(t.turnId)],
);

/** PostgreSQL's full-text document type; read as its text form, never written (generated). */
const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });

/** Tasks are never deleted: tasks.delete sets archived_at. */
export const tasks = pgTable(
  'tasks',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    title: text('title').notNull(),
    description: text('description'),
    /** todo | in_progress | blocked | done | cancelled */
    status: text('status').notNull().default('todo'),
    /** critical | high | medium | low */
    priority: text('priority').notNull().default('medium'),
    dueDate: date('due_date', { mode: 'string' }),
    assignee: text('assignee'),
    tags: text('tags').array().notNull().default(sql`'{}'`),
    parentId: text('parent_id').references((): AnyPgColumn => tasks.id),
    recurrence: text('recurrence'),
    archivedAt: timestamp('archived_at', { withTimezone: true }),
    completedAt: timestamp('completed_at', { withTimezone: true }),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    searchVector: tsvector('search_vector').generatedAlwaysAs(
      sql`setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', coalesce(description, '')), 'B')`,
    ),
  },
  (t) => [
    check('tasks_title_check', sql`btrim(${t.title}) <> ''`),
    check('tasks_status_check', sql`${t.status} IN ('todo', 'in_progress', 'blocked', 'done', 'cancelled')`),
    check('tasks_priority_check', sql`${t.priority} IN ('critical', 'high', 'medium', 'low')`),
    index('tasks_user_status_idx').on(t.userId, t.status),
    index('tasks_user_due_date_idx').on(t.userId, t.dueDate),
    index('tasks_user_updated_idx').on(t.userId, t.updatedAt),
    index('tasks_parent_idx').on(t.parentId),
    index('tasks_search_idx').using('gin', t.searchVector),
    index('tasks_tags_idx').using('gin', t.tags),
  ],
);

export const taskDependencies = pgTable(
  'task_dependencies',
  {
    taskId: text('task_id')
      .notNull()
      .references(() => tasks.id),
    dependsOnId: text('depends_on_id')
      .notNull()
      .references(() => tasks.id),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.taskId, t.dependsOnId] }),
    check('task_dependencies_check', sql`${t.taskId} <> ${t.dependsOnId}`),
    index('task_dependencies_depends_on_idx').on(t.dependsOnId),
  ],
);

export const taskComments = pgTable(
  'task_comments',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    taskId: text('task_id')
      .notNull()
      .references(() => tasks.id),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    author: text('author').notNull(),
    body: text('body').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('task_comments_task_idx').on(t.taskId, t.createdAt)],
);

/** One row per changed field, with who changed it (`user:<id>` or `agent:<id>`). */
export const taskHistory = pgTable(
  'task_history',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    taskId: text('task_id')
      .notNull()
      .references(() => tasks.id),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    actor: text('actor').notNull(),
    field: text('field').notNull(),
    oldValue: jsonb('old_value'),
    newValue: jsonb('new_value'),
    executionId: text('execution_id'),
    createdAt: createdAt(),
  },
  (t) => [index('task_history_task_idx').on(t.taskId, t.createdAt)],
);

export const conversationSummaries = pgTable('conversation_summaries', {
  id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
  conversationId: text('conversation_id')
    .notNull()
    .references(() => conversations.id),
  version: integer('version').notNull(),
  summary: text('summary').notNull(),
  tokenCount: integer('token_count').notNull(),
  model: text('model'),
  throughMessageId: bigint('through_message_id', { mode: 'number' }).notNull(),
  topicChanged: boolean('topic_changed').notNull().default(false),
  createdAt: createdAt(),
});

/**
 * Long-term memories. Never deleted: the lifecycle job sets archived_at. Embeddings are not
 * here: migrations/0004_memory.vector.sql creates `memory_embeddings (memory_id, embedding
 * vector)` only where pgvector exists, and raw SQL in src/memory/store/ owns it.
 */
export const memoryEntries = pgTable(
  'memory_entries',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    content: text('content').notNull(),
    tags: text('tags').array().notNull().default(sql`'{}'`),
    /** preference | fact | decision | goal | relationship | context | instruction */
    category: text('category').notNull(),
    importance: real('importance').notNull().default(0.5),
    /** user | compaction | agent | import */
    sourceType: text('source_type').notNull().default('user'),
    sourceConversationId: text('source_conversation_id'),
    /** sha256 of the normalized content. */
    contentHash: text('content_hash').notNull(),
    embeddingModel: text('embedding_model'),
    /** Null until the current content is embedded. */
    embeddedAt: timestamp('embedded_at', { withTimezone: true }),
    accessedAt: timestamp('accessed_at', { withTimezone: true }).notNull().defaultNow(),
    decayedAt: timestamp('decayed_at', { withTimezone: true }),
    archivedAt: timestamp('archived_at', { withTimezone: true }),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    searchVector: tsvector('search_vector').generatedAlwaysAs(
      sql`setweight(to_tsvector('english', content), 'A') || setweight(to_tsvector('english', memory_tags_text(tags)), 'B')`,
    ),
  },
  (t) => [
    check('memory_entries_content_check', sql`btrim(${t.content}) <> ''`),
    check(
      'memory_entries_category_check',
      sql`${t.category} IN ('preference', 'fact', 'decision', 'goal', 'relationship', 'context', 'instruction')`,
    ),
    check('memory_entries_importance_check', sql`${t.importance} >= 0 AND ${t.importance} <= 1`),
    check(
      'memory_entries_source_type_check',
      sql`${t.sourceType} IN ('user', 'compaction', 'agent', 'import')`,
    ),
    index('memory_entries_user_category_idx').on(t.userId, t.category),
    index('memory_entries_user_archived_idx').on(t.userId, t.archivedAt),
    index('memory_entries_search_idx').using('gin', t.searchVector),
    index('memory_entries_tags_idx').using('gin', t.tags),
    index('memory_entries_unembedded_idx')
      .on(t.createdAt)
      .where(sql`embedded_at IS NULL AND archived_at IS NULL`),
  ],
);

/** People, organizations, projects… named in memories; one row per user, name and kind. */
export const entities = pgTable(
  'entities',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    name: text('name').notNull(),
    /** person | organization | project | place | topic | other */
    kind: text('kind').notNull().default('other'),
    normalizedName: text('normalized_name').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    unique('entities_user_id_normalized_name_kind_key').on(t.userId, t.normalizedName, t.kind),
    check('entities_name_check', sql`btrim(${t.name}) <> ''`),
    check(
      'entities_kind_check',
      sql`${t.kind} IN ('person', 'organization', 'project', 'place', 'topic', 'other')`,
    ),
  ],
);

export const entityRelations = pgTable(
  'entity_relations',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    sourceEntityId: text('source_entity_id')
      .notNull()
      .references(() => entities.id),
    targetEntityId: text('target_entity_id')
      .notNull()
      .references(() => entities.id),
    relation: text('relation').notNull(),
    /** The memory the relation was first learnt from. */
    memoryId: text('memory_id').references(() => memoryEntries.id),
    createdAt: createdAt(),
  },
  (t) => [
    unique('entity_relations_source_entity_id_target_entity_id_relation_key').on(
      t.sourceEntityId,
      t.targetEntityId,
      t.relation,
    ),
    check('entity_relations_relation_check', sql`btrim(${t.relation}) <> ''`),
    check('entity_relations_check', sql`${t.sourceEntityId} <> ${t.targetEntityId}`),
    index('entity_relations_target_idx').on(t.targetEntityId),
  ],
);

export const entityMentions = pgTable(
  'entity_mentions',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    entityId: text('entity_id')
      .notNull()
      .references(() => entities.id),
    memoryId: text('memory_id').references(() => memoryEntries.id),
    conversationId: text('conversation_id'),
    createdAt: createdAt(),
  },
  (t) => [
    unique('entity_mentions_entity_id_memory_id_key').on(t.entityId, t.memoryId),
    index('entity_mentions_memory_idx').on(t.memoryId),
  ],
);
