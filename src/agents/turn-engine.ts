import { randomUUID } from 'node:crypto';
import type { ChannelMode, ResolvedConfig } from '../config/index.ts';
import type { Database } from '../db/index.ts';
import { StewardError } from '../errors.ts';
import { NOT_CONFIGURED_MESSAGE } from '../llm/not-configured.ts';
import { countTokens } from '../llm/tokens.ts';
import type { ChatMessage, LlmClient, ToolDefinition, Usage } from '../llm/types.ts';
import { emptyUsage } from '../llm/usage.ts';
import type { Logger } from '../logging/logger.ts';
import {
  appendMessage,
  type Conversation,
  createConversation,
  getConversation,
  latestConversation,
  recentMessages,
  setConversationMode,
  setMessageTurn,
} from '../memory/index.ts';
import type { SkillExecutor } from '../skills/executor/index.ts';
import type { SkillHandler, SkillSnapshot } from '../skills/types.ts';
import { ensureUser, type User } from '../users/index.ts';
import { plainResult } from './agent-types.ts';
import { buildOrchestratorMessages, historyWithinBudget, withBreakpoint } from './context-builder.ts';
import { directTools } from './direct-tools.ts';
import { type Emit, noEmit, type TurnEvent } from './events.ts';
import { type AgentBoard, type LoopOutcome, runOrchestratorLoop } from './orchestrator-loop.ts';
import { orchestratorTools } from './orchestrator-tools.ts';
import {
  findPausedTurn,
  markPausedTurnHandled,
  type PausedState,
  recoverInterruptedTurns,
  restoreBoard,
  resumeNote,
} from './paused-turns.ts';
import { isAffirmative, progressReport } from './progress-report.ts';
import { describeNow, orchestratorSystemPrompt } from './prompts.ts';
import type { TurnScope } from './sub-agent.ts';
import { TurnBudget } from './turn-budget.ts';

export type TurnStatus = 'running' | 'completed' | 'paused' | 'interrupted' | 'failed';

export type TurnInput = {
  userId: string;
  text: string;
  channel: string;
  /** Continue this conversation (must belong to the user); default: the user's latest on the channel. */
  conversationId?: string;
  newConversation?: boolean;
  /** Sets this conversation's agent mode from now on (overrides the channel's). */
  mode?: ChannelMode;
  channelMessageId?: string;
  signal?: AbortSignal;
  emit?: Emit;
};

export type TurnOutcome = {
  reply: string;
  conversationId: string;
  turnId: string;
  status: TurnStatus;
  usage: Usage;
  /** The channel message id was seen before: nothing was run again. */
  duplicate: boolean;
};

/** Retrieves the memories worth showing for a message, within a token budget (the memory issue fills it). */
export type MemoryHook = (request: {
  userId: string;
  text: string;
  budgetTokens: number;
}) => Promise<string[]>;

export type EngineDeps = {
  database: Database;
  llm: LlmClient;
  executor: SkillExecutor;
  skills: () => SkillSnapshot;
  handlers: ReadonlyMap<string, SkillHandler>;
  config: () => ResolvedConfig;
  logger: Logger;
  memories?: MemoryHook;
  /** Runs after each finished turn, before its reply is returned (queues compaction). Must be quick. */
  afterTurn?: (turn: { turnId: string; conversationId: string; userId: string }) => Promise<void>;
  now?: () => Date;
};

const MAX_TOOL_RESULT_IN_HISTORY = 600;

/**
 * Runs turns: one at a time per conversation (an in-process queue plus a Postgres advisory
 * lock), the user message stored before anything else, every message persisted as it happens.
 */
export class TurnEngine {
  readonly #deps: EngineDeps;
  readonly #queues = new Map<string, Promise<unknown>>();
  readonly #now: () => Date;

  constructor(deps: EngineDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? (() => new Date());
  }

  /** Handles one user message end to end. Throws only for bad input (unknown conversation). */
  async handle(input: TurnInput): Promise<TurnOutcome> {
    const { database } = this.#deps;
    const user = await ensureUser(database, input.userId);
    let conversation = await this.#conversationFor(user, input);
    if (input.mode && input.mode !== conversation.mode) {
      await setConversationMode(database, conversation.id, input.mode);
      conversation = { ...conversation, mode: input.mode };
    }
    const stored = await appendMessage(database, {
      conversationId: conversation.id,
      userId: user.id,
      role: 'user',
      content: input.text,
      tokenCount: countTokens(input.text),
      channel: input.channelMessageId ? input.channel : null,
      channelMessageId: input.channelMessageId ?? null,
    });
    if (stored.duplicate) return this.#duplicateOutcome(conversation.id, stored.id);
    return this.#enqueue(conversation.id, () =>
      database.withAdvisoryLock(`conversation:${conversation.id}`, () =>
        this.#runTurn(user, conversation, stored.id, input),
      ),
    );
  }

  /** Waits for every queued turn (a one-shot process calls this before exiting). */
  async drain(): Promise<void> {
    while (this.#queues.size > 0) await Promise.allSettled([...this.#queues.values()]);
  }

  /**
   * Marks turns left `running` by a crash as interrupted and tells each user what was done,
   * asking whether to continue. Turns another live process is running are left alone.
   */
  recoverInterrupted(): Promise<number> {
    return recoverInterruptedTurns(this.#deps.database, this.#deps.logger);
  }

  async #conversationFor(user: User, input: TurnInput): Promise<Conversation> {
    const { database } = this.#deps;
    if (input.conversationId) {
      const found = await getConversation(database, user.id, input.conversationId);
      if (!found) {
        throw new StewardError(
          'conversation_not_found',
          `No conversation ${input.conversationId} for user ${user.id}.`,
        );
      }
      return found;
    }
    if (input.newConversation) return createConversation(database, user.id, input.channel);
    return latestConversation(database, user.id, input.channel);
  }

  async #duplicateOutcome(conversationId: string, messageId: number): Promise<TurnOutcome> {
    const rows = await this.#deps.database.query<{ id: string; status: TurnStatus; reply: string | null }>(
      'SELECT id, status, reply FROM turns WHERE user_message_id = $1',
      [messageId],
    );
    const turn = rows[0];
    return {
      reply: turn?.reply ?? '',
      conversationId,
      turnId: turn?.id ?? '',
      status: turn?.status ?? 'running',
      usage: emptyUsage(),
      duplicate: true,
    };
  }

  #enqueue<T>(key: string, run: () => Promise<T>): Promise<T> {
    const previous = this.#queues.get(key) ?? Promise.resolve();
    const result = previous.then(run, run);
    const tail = result.catch(() => undefined);
    this.#queues.set(key, tail);
    void tail.then(() => {
      if (this.#queues.get(key) === tail) this.#queues.delete(key);
    });
    return result;
  }

  #modeFor(conversation: Conversation, channel: string): ChannelMode {
    const configured = this.#deps.config().channels.modes[channel];
    if (
      conversation.mode === 'multi_agent' ||
      conversation.mode === 'single_loop' ||
      conversation.mode === 'direct'
    ) {
      return conversation.mode;
    }
    return configured ?? (channel === 'voice' ? 'single_loop' : 'multi_agent');
  }

  async #runTurn(
    user: User,
    conversation: Conversation,
    messageId: number,
    input: TurnInput,
  ): Promise<TurnOutcome> {
    const { database, logger } = this.#deps;
    const config = this.#deps.config();
    const listener = input.emit ?? noEmit;
    // Every event goes to the log too (debug), so logs and the trace tell the same story.
    const emit: Emit = (event) => {
      if (event.type !== 'text_delta') logger.debug({ event, conversationId: conversation.id }, event.type);
      listener(event);
    };
    const turnId = randomUUID();
    const mode = this.#modeFor(conversation, input.channel);
    const paused = await findPausedTurn(this.#deps.database, conversation.id);
    await database.query(
      `INSERT INTO turns (id, conversation_id, user_id, status, mode, user_message_id) VALUES ($1, $2, $3, 'running', $4, $5)`,
      [turnId, conversation.id, user.id, mode, messageId],
    );
    await setMessageTurn(database, messageId, turnId);
    if (paused) await markPausedTurnHandled(this.#deps.database, paused.id, paused.state);
    const resuming = paused !== null && isAffirmative(input.text);
    emit({ type: 'turn_start', turnId, conversationId: conversation.id, mode, resumed: resuming });

    const turn: TurnScope = {
      turnId,
      conversationId: conversation.id,
      userId: user.id,
      timezone: user.timezone,
      channel: input.channel,
      originalRequest: resuming && paused ? paused.request : input.text,
    };
    const persist = async (message: ChatMessage) => {
      await appendMessage(database, {
        conversationId: conversation.id,
        userId: user.id,
        turnId,
        role: message.role,
        content:
          typeof message.content === 'string'
            ? message.content
            : message.content === null
              ? ''
              : JSON.stringify(message.content),
        toolCalls: message.role === 'assistant' ? (message.toolCalls ?? null) : null,
        toolCallId: message.role === 'tool' ? message.toolCallId : null,
        tokenCount: typeof message.content === 'string' ? countTokens(message.content) : 0,
      });
    };

    let outcome: LoopOutcome;
    const board: AgentBoard = { specs: new Map(), outcomes: new Map() };
    try {
      if (config.endpoint.provider === 'none') {
        outcome = { kind: 'reply', text: NOT_CONFIGURED_MESSAGE };
        await persist({ role: 'assistant', content: NOT_CONFIGURED_MESSAGE });
      } else {
        const turnMessages: ChatMessage[] = [withBreakpoint({ role: 'user', content: input.text })];
        if (resuming && paused) {
          restoreBoard(board, paused.state);
          const note = await resumeNote(this.#deps.executor, paused.state, turn, emit);
          if (note) {
            turnMessages.push({ role: 'system', content: note });
            await persist({ role: 'system', content: note });
          }
        }
        outcome = await this.#orchestrate({
          mode,
          turn,
          conversation,
          user,
          turnMessages,
          board,
          emit,
          persist,
          input,
        });
      }
    } catch (error) {
      logger.error({ err: error, turnId }, 'turn failed');
      outcome = { kind: 'error', error: error instanceof Error ? error.message : String(error) };
    }
    return this.#finish({
      outcome,
      board,
      turnId,
      conversation,
      user,
      emit,
      persist,
      originalRequest: turn.originalRequest,
    });
  }

  async #orchestrate(options: {
    mode: ChannelMode;
    turn: TurnScope;
    conversation: Conversation;
    user: User;
    turnMessages: ChatMessage[];
    board: AgentBoard;
    emit: Emit;
    persist: (message: ChatMessage) => Promise<void>;
    input: TurnInput;
  }): Promise<LoopOutcome> {
    const { database } = this.#deps;
    const config = this.#deps.config();
    const snapshot = this.#deps.skills();
    const tools: ToolDefinition[] =
      options.mode === 'direct'
        ? [...orchestratorTools('direct'), ...directTools(snapshot, this.#deps.handlers)]
        : orchestratorTools(options.mode);
    const systemPrompt = orchestratorSystemPrompt(options.mode, snapshot);
    const stored = await recentMessages(database, options.conversation.id, { limit: 400 });
    const history = historyWithinBudget(
      stored.filter((message) => message.turnId !== options.turn.turnId),
      { budgetTokens: config.memory.history_budget_tokens, maxToolResultChars: MAX_TOOL_RESULT_IN_HISTORY },
    );
    const memories = this.#deps.memories
      ? await this.#deps.memories({
          userId: options.user.id,
          text: options.input.text,
          budgetTokens: config.memory.memory_budget_tokens,
        })
      : [];
    const fresh = await database.query<{ summary: string }>(
      'SELECT summary FROM conversations WHERE id = $1',
      [options.conversation.id],
    );
    const prefix = buildOrchestratorMessages({
      systemPrompt,
      context: {
        now: describeNow(this.#now(), options.user.timezone),
        summary: fresh[0]?.summary ?? '',
        memories,
      },
      history,
      turnMessages: [],
    });
    const budget = await this.#budgetFor(options.conversation.id);
    const signal = options.input.signal ?? new AbortController().signal;
    return runOrchestratorLoop(
      {
        llm: this.#deps.llm,
        executor: this.#deps.executor,
        skills: this.#deps.skills,
        database,
        logger: this.#deps.logger,
        now: this.#now,
        emit: options.emit,
      },
      {
        mode: options.mode,
        turn: options.turn,
        prefix,
        tools,
        turnMessages: options.turnMessages,
        board: options.board,
        budget,
        limits: config.limits,
        signal,
        persist: options.persist,
        onDelta: (text) => options.emit({ type: 'text_delta', text }),
      },
    );
  }

  /** Fresh turn counters, capped by what the conversation's sliding window has left. */
  async #budgetFor(conversationId: string): Promise<TurnBudget> {
    const { limits } = this.#deps.config();
    const since = new Date(this.#now().getTime() - limits.conversation_window_ms);
    const rows = await this.#deps.database.query<{ used: number }>(
      "SELECT count(*)::int AS used FROM skill_executions WHERE conversation_id = $1 AND kind = 'skill' AND started_at > $2",
      [conversationId, since],
    );
    const left = Math.max(0, limits.conversation_max_skill_calls - (rows[0]?.used ?? 0));
    const conversationBound = left < limits.turn_max_skill_calls;
    return new TurnBudget({
      maxSkillCalls: Math.min(limits.turn_max_skill_calls, left),
      maxAgents: limits.turn_max_agents,
      maxIterations: limits.turn_max_orchestrator_iterations,
      skillLimitReason: conversationBound
        ? `the limit of ${limits.conversation_max_skill_calls} skill calls per ${Math.round(limits.conversation_window_ms / 60_000)} minutes in this conversation`
        : undefined,
    });
  }

  async #finish(options: {
    outcome: LoopOutcome;
    board: AgentBoard;
    turnId: string;
    conversation: Conversation;
    user: User;
    emit: Emit;
    persist: (message: ChatMessage) => Promise<void>;
    originalRequest: string;
  }): Promise<TurnOutcome> {
    const { database } = this.#deps;
    const { outcome, board, turnId } = options;
    let status: TurnStatus;
    let reply: string;
    let state: PausedState | null = null;
    const specs = [...board.specs.values()];
    const results = [...board.outcomes.values()].map(plainResult);
    switch (outcome.kind) {
      case 'reply':
        status = 'completed';
        reply = outcome.text || 'Done.';
        break;
      case 'limit': {
        status = 'paused';
        const calls = await this.#directCalls(turnId);
        reply = progressReport(outcome.reason, board, calls);
        state = { kind: 'limit', specs, results };
        options.emit({ type: 'limit', limit: outcome.reason, detail: reply });
        await options.persist({ role: 'assistant', content: reply });
        break;
      }
      case 'confirmation': {
        status = 'paused';
        const done = results
          .filter((result) => result.status === 'completed')
          .map((result) => `- ${result.agentId}: done`);
        reply = [
          outcome.text,
          `Before I run \`${outcome.pending.command}\` I need your OK: the safety check said ${outcome.pending.reasoning}`,
          done.length ? `Already done:\n${done.join('\n')}` : '',
          'Reply "yes" to run exactly that command once, or tell me what to do instead.',
        ]
          .filter(Boolean)
          .join('\n\n');
        state = { kind: 'confirmation', pending: outcome.pending, specs, results };
        await options.persist({ role: 'assistant', content: reply });
        break;
      }
      default:
        status = 'failed';
        reply = `Sorry, I could not finish that: ${outcome.error}`;
        await options.persist({ role: 'assistant', content: reply });
    }
    const usage = await this.#turnUsage(turnId);
    await database.query(
      `UPDATE turns SET status = $2, reply = $3, stop_reason = $4, error = $5, state = $6,
         prompt_tokens = $7, cached_tokens = $8, cache_write_tokens = $9, completion_tokens = $10, cost = $11, finished_at = now()
       WHERE id = $1`,
      [
        turnId,
        status,
        reply,
        outcome.kind,
        outcome.kind === 'error' ? outcome.error : null,
        state ? JSON.stringify(state) : null,
        usage.promptTokens,
        usage.cachedTokens,
        usage.cacheWriteTokens,
        usage.completionTokens,
        usage.cost,
      ],
    );
    options.emit({ type: 'turn_end', turnId, status, reply, usage });
    if (this.#deps.afterTurn && status !== 'failed') {
      // Awaited so the follow-up work (a queued compaction job) is stored before the reply goes out.
      await this.#deps
        .afterTurn({ turnId, conversationId: options.conversation.id, userId: options.user.id })
        .catch((error) => this.#deps.logger.error({ err: error, turnId }, 'after-turn work failed'));
    }
    return { reply, conversationId: options.conversation.id, turnId, status, usage, duplicate: false };
  }

  async #directCalls(turnId: string): Promise<string[]> {
    const rows = await this.#deps.database.query<{ command: string; status: string }>(
      "SELECT command, status FROM skill_executions WHERE turn_id = $1 AND kind = 'skill' AND parent_id IS NULL ORDER BY started_at",
      [turnId],
    );
    return rows.map((row) => `${row.command} (${row.status})`);
  }

  async #turnUsage(turnId: string): Promise<Usage> {
    const rows = await this.#deps.database.query<Usage>(
      `SELECT COALESCE(sum(prompt_tokens), 0)::int AS "promptTokens", COALESCE(sum(cached_tokens), 0)::int AS "cachedTokens",
              COALESCE(sum(cache_write_tokens), 0)::int AS "cacheWriteTokens",
              COALESCE(sum(completion_tokens), 0)::int AS "completionTokens", COALESCE(sum(cost), 0)::float8 AS cost
       FROM llm_calls WHERE turn_id = $1`,
      [turnId],
    );
    return rows[0]!;
  }
}

export type { TurnEvent };
