import type { ChannelMode, ResolvedConfig } from '../config/index.ts';
import type { Database } from '../db/index.ts';
import {
  type ChatMessage,
  countTokensAsync,
  type LlmClient,
  NOT_CONFIGURED_MESSAGE,
  type ToolDefinition,
  type Usage,
} from '../llm/index.ts';
import type { Logger } from '../logging/index.ts';
import { appendMessage, type Conversation, type StoredMessage } from '../memory/index.ts';
import {
  closeInterruptedExecutions,
  fencedSources,
  hideDomains,
  isOutsideSource,
  type SkillExecutor,
  type SkillHandler,
  type SkillSnapshot,
  skillCallsOfTurn,
  skillsVisibleTo,
  type UnavailableDomain,
} from '../skills/index.ts';
import type { User } from '../users/index.ts';
import { plainResult, type TurnStatus } from './agent-types.ts';
import { restoreBoardFromRecords } from './board-records.ts';
import {
  buildOrchestratorMessages,
  historyWithinBudget,
  toChatMessages,
  turnContextText,
  userMessage,
} from './context-builder.ts';
import { directTools } from './direct-tools.ts';
import type { Emit, TurnEvent } from './events.ts';
import { type AgentBoard, type LoopOutcome, runOrchestratorLoop } from './orchestrator-loop.ts';
import { orchestratorTools } from './orchestrator-tools.ts';
import {
  findPausedTurn,
  type InterruptionCause,
  interruptionNote,
  markPausedTurnHandled,
  type PausedState,
  restoreBoard,
  resumeNote,
} from './paused-turns.ts';
import { isAffirmative, progressReport } from './progress-report.ts';
import { describeNow, orchestratorSystemPrompt } from './prompts.ts';
import {
  type Receipt,
  receiptsJson,
  recordedReceipts,
  unbackedClaims,
  withoutForgedReceipts,
  withReceiptLines,
} from './receipts.ts';
import { runMission, type TurnMission } from './run-mission.ts';
import type { TurnScope } from './sub-agent.ts';
import { turnBudgetFor } from './turn-budget.ts';
import { finishTurn, type TurnRecord } from './turns.ts';

export type TurnOutcome = {
  /** What the user is told; ends with the receipt lines when the turn shows them. */
  reply: string;
  conversationId: string;
  turnId: string;
  status: TurnStatus;
  usage: Usage;
  /** The channel message id was seen before: nothing was run again. */
  duplicate: boolean;
  /** What the turn did, from its execution records (whether or not `reply` shows the lines). */
  receipts: Receipt[];
};

/** Retrieves the memories worth showing for a message, within a token budget. */
export type MemoryHook = (request: {
  userId: string;
  text: string;
  budgetTokens: number;
}) => Promise<string[]>;

export type RunTurnDeps = {
  database: Database;
  llm: LlmClient;
  executor: SkillExecutor;
  /** Every loaded skill; a turn sees only those its user may (no other user's workflows). */
  skills: () => SkillSnapshot;
  handlers: ReadonlyMap<string, SkillHandler>;
  config: () => ResolvedConfig;
  logger: Logger;
  memories?: MemoryHook;
  /** Skill domains this user cannot use now (a provider not connected): hidden from the model. */
  unavailableDomains?: (userId: string) => Promise<readonly UnavailableDomain[]>;
  /** Runs after each finished turn, before its reply is returned (queues compaction). Must be quick. */
  afterTurn?: (turn: { turnId: string; conversationId: string; userId: string }) => Promise<void>;
  /** Sees every event of every turn except text deltas (metrics, traces, alerts). Must be quick; a throw is logged. */
  observe?: TurnObserver;
  /**
   * Runs before a turn calls any model. A string refuses the turn: it fails with that message as
   * its reply (the daily spend cap). Must not throw.
   */
  beforeTurn?: (turn: TurnRef) => Promise<string | null>;
  now: () => Date;
};

/** Which turn an observed event belongs to. */
export type TurnRef = { turnId: string; conversationId: string; userId: string; channel: string };

export type TurnObserver = (event: TurnEvent, turn: TurnRef) => void;

export type ClaimedTurn = {
  turn: TurnRecord;
  userMessageId: number;
  user: User;
  conversation: Conversation;
  /** The conversation's messages since the summary's last fold (loaded once, before the claim). */
  stored: StoredMessage[];
  /** The context part the user message was sent with (null when none). */
  context: string | null;
  /** The conversation's latest ended turn, when read under the lock already (else read here). */
  latestEnded?: TurnRecord | null | undefined;
};

/**
 * The context part of a new user message: the time, and the memories worth showing that the
 * visible history has not shown yet. Computed before the message is stored, and stored with it.
 */
export async function prepareTurnContext(
  deps: Pick<RunTurnDeps, 'memories' | 'config' | 'now'>,
  request: { user: User; text: string; stored: readonly StoredMessage[] },
): Promise<string> {
  const shown = request.stored.map((message) => message.context ?? '').join('\n');
  const memories = deps.memories
    ? await deps.memories({
        userId: request.user.id,
        text: request.text,
        budgetTokens: deps.config().memory.memory_budget_tokens,
      })
    : [];
  return turnContextText({
    now: describeNow(deps.now(), request.user.timezone),
    memories: memories.filter((memory) => !shown.includes(`- ${memory}\n`)),
  });
}

export type RunTurnOptions = {
  listener: Emit;
  /** Run this mission's sub-agent instead of the orchestrator (a scheduled workflow run). */
  mission?: TurnMission;
  /** Cancels the turn (the user's Ctrl-C, a closed request). */
  signal: AbortSignal;
  /** Set when Steward is shutting down: the turn stops and is recorded as interrupted. */
  shutdown: AbortSignal;
  /** End the reply with its receipt lines (else they travel only as data in the outcome). */
  receiptLines: boolean;
};

/**
 * Runs one claimed turn: builds its context from the completed turns before it, runs the
 * orchestrator (or answers how to configure an LLM), persists every message as it happens, and
 * records how the turn ended. Never throws for model or skill failures.
 */
export async function runClaimedTurn(
  allDeps: RunTurnDeps,
  claimed: ClaimedTurn,
  options: RunTurnOptions,
): Promise<TurnOutcome> {
  const { turn, user, conversation } = claimed;
  // Everything below — prompt, get_skill, dispatch checks, sub-agents — sees the user's view.
  const deps: RunTurnDeps = { ...allDeps, skills: () => skillsVisibleTo(allDeps.skills(), user.id) };
  const { database, logger } = deps;
  const config = deps.config();
  const turnId = turn.id;
  const ref: TurnRef = {
    turnId,
    conversationId: conversation.id,
    userId: user.id,
    channel: turn.channel ?? 'api',
  };
  const emit: Emit = (event) => {
    if (event.type !== 'text_delta') {
      try {
        deps.observe?.(event, ref);
      } catch (error) {
        logger.warn({ err: error, event: event.type }, 'turn observer failed');
      }
      // Every event goes to the log too (debug), so logs and the trace tell the same story.
      logger.debug({ event, conversationId: conversation.id }, event.type);
    }
    options.listener(event);
  };
  const mode = turn.mode as ChannelMode;
  const signal = AbortSignal.any([options.signal, options.shutdown]);
  const paused = await findPausedTurn(database, conversation.id, claimed.latestEnded);
  if (paused) await markPausedTurnHandled(database, paused.id, paused.state);
  const resuming = paused !== null && isAffirmative(turn.request);
  emit({ type: 'turn_start', turnId, conversationId: conversation.id, mode, resumed: resuming });

  const scope: TurnScope = {
    turnId,
    conversationId: conversation.id,
    userId: user.id,
    timezone: user.timezone,
    channel: turn.channel ?? 'api',
    originalRequest: resuming && paused ? paused.request : turn.request,
  };
  let persisted = 0;
  const persist = async (message: ChatMessage) => {
    persisted++;
    const content =
      typeof message.content === 'string'
        ? message.content
        : message.content === null
          ? ''
          : JSON.stringify(message.content);
    await appendMessage(database, {
      conversationId: conversation.id,
      userId: user.id,
      turnId,
      role: message.role,
      content,
      toolCalls: message.role === 'assistant' ? (message.toolCalls ?? null) : null,
      toolCallId: message.role === 'tool' ? message.toolCallId : null,
      tokenCount: typeof message.content === 'string' ? await countTokensAsync(message.content) : 0,
    });
  };

  let outcome: LoopOutcome;
  const board: AgentBoard = { specs: new Map(), outcomes: new Map() };
  try {
    const refusal = (await deps.beforeTurn?.(ref)) ?? null;
    if (refusal) {
      outcome = { kind: 'error', error: refusal };
    } else if (options.mission) {
      outcome =
        config.endpoint.provider === 'none'
          ? { kind: 'error', error: NOT_CONFIGURED_MESSAGE }
          : await runMission(deps, {
              mission: options.mission,
              scope,
              board,
              budget: turnBudgetFor(deps, conversation.id),
              emit,
              signal,
            });
    } else if (config.endpoint.provider === 'none') {
      outcome = { kind: 'reply', text: NOT_CONFIGURED_MESSAGE };
    } else {
      // Outside text shown again from earlier turns counts as read by this one (sentinel, redaction).
      for (const message of claimed.stored) {
        if (fencedSources(message.content).some(isOutsideSource))
          deps.executor.taintTurn(turnId, message.content);
      }
      // A turn re-run after a crash continues from the messages its first attempt stored.
      const earlier = claimed.stored.filter((m) => m.turnId === turnId && m.id > claimed.userMessageId);
      const turnMessages: ChatMessage[] = [
        userMessage(turn.request, claimed.context),
        ...toChatMessages(earlier),
      ];
      // Its agents too: the model was told "Queued agent X"; X must be there, with how it ended.
      if (earlier.length) await restoreBoardFromRecords(database, board, { turnId, messages: earlier });
      if (resuming && paused) {
        restoreBoard(board, paused.state);
        if (paused.state.kind === 'interrupted') {
          const messages = claimed.stored.filter((m) => m.turnId === paused.id);
          await restoreBoardFromRecords(database, board, { turnId: paused.id, messages });
        }
        const note = await resumeNote(deps.executor, paused.state, scope, emit);
        if (note) {
          turnMessages.push({ role: 'system', content: note });
          await persist({ role: 'system', content: note });
        }
      }
      outcome = await orchestrate(deps, {
        mode,
        scope,
        claimed,
        turnMessages,
        board,
        emit,
        persist,
        signal,
      });
    }
  } catch (error) {
    logger.error({ err: error, turnId }, 'turn failed');
    outcome = { kind: 'error', error: error instanceof Error ? error.message : String(error) };
  } finally {
    deps.executor.endTurn(turnId);
  }
  const stopped: InterruptionCause | null = options.shutdown.aborted
    ? 'shutdown'
    : options.signal.aborted
      ? 'cancelled'
      : null;
  return finish(deps, {
    outcome,
    board,
    claimed,
    emit,
    originalRequest: scope.originalRequest,
    stopped,
    receiptLines: options.receiptLines,
    // Its first attempt (none before a crash), no earlier request resumed, no mission, and no
    // message stored past its request: the model called no tool, so no skill ran for this turn.
    ranNothing: turn.userMessageId === null && !resuming && !options.mission && persisted === 0,
  });
}

async function orchestrate(
  deps: RunTurnDeps,
  options: {
    mode: ChannelMode;
    scope: TurnScope;
    claimed: ClaimedTurn;
    turnMessages: ChatMessage[];
    board: AgentBoard;
    emit: Emit;
    persist: (message: ChatMessage) => Promise<void>;
    signal: AbortSignal;
  },
): Promise<LoopOutcome> {
  const { database } = deps;
  const { claimed } = options;
  const config = deps.config();
  const unavailable = (await deps.unavailableDomains?.(claimed.user.id)) ?? [];
  const snapshot = hideDomains(deps.skills(), unavailable);
  const tools: ToolDefinition[] =
    options.mode === 'direct'
      ? [...orchestratorTools('direct'), ...directTools(snapshot, deps.handlers)]
      : orchestratorTools(options.mode);
  const systemPrompt = orchestratorSystemPrompt(options.mode, snapshot);
  // History: the completed turns since the summary's last fold, as they were sent. It is over
  // its budget only when compaction has not caught up; the oldest turns are then left out.
  const history = historyWithinBudget(
    claimed.stored.filter((message) => message.id < claimed.userMessageId),
    { budgetTokens: config.memory.history_budget_tokens },
  );
  const prefix = buildOrchestratorMessages({
    systemPrompt,
    summary: claimed.conversation.summary,
    history,
    turnMessages: [],
  });
  const budget = turnBudgetFor(deps, claimed.conversation.id);
  return runOrchestratorLoop(
    {
      llm: deps.llm,
      executor: deps.executor,
      skills: deps.skills,
      database,
      logger: deps.logger,
      now: deps.now,
      emit: options.emit,
    },
    {
      mode: options.mode,
      turn: options.scope,
      unavailable,
      prefix,
      tools,
      turnMessages: options.turnMessages,
      board: options.board,
      budget,
      limits: config.limits,
      signal: options.signal,
      persist: options.persist,
      onDelta: (text) => options.emit({ type: 'text_delta', text }),
    },
  );
}

/** Said when the model gave no answer, even when asked again. */
export const NO_ANSWER_TEXT = 'I got no answer from the model for this request.';

async function finish(
  deps: RunTurnDeps,
  options: {
    outcome: LoopOutcome;
    board: AgentBoard;
    claimed: ClaimedTurn;
    emit: Emit;
    originalRequest: string;
    stopped: InterruptionCause | null;
    receiptLines: boolean;
    /** Nothing can have run for the turn: there are no recorded effects to read. */
    ranNothing: boolean;
  },
): Promise<TurnOutcome> {
  const { database } = deps;
  const { outcome, board, claimed } = options;
  const turnId = claimed.turn.id;
  let status: TurnStatus;
  let reply: string;
  let state: PausedState | null = null;
  let error: string | null = outcome.kind === 'error' ? outcome.error : null;
  /** What the model wrote for the user, checked against what the turn did. */
  let modelText = '';
  const specs = [...board.specs.values()];
  const results = [...board.outcomes.values()].map(plainResult);
  if (options.stopped && outcome.kind !== 'reply') {
    // Cancelled or shut down mid-turn: record what happened, so "continue" can finish it.
    const uncertain = await closeInterruptedExecutions(database, turnId);
    const calls = (await skillCallsOfTurn(database, turnId)).map((call) =>
      uncertain.some((u) => u.command === call.command) ? { ...call, status: 'unknown' } : call,
    );
    const note = interruptionNote(options.originalRequest, calls, options.stopped);
    status = 'interrupted';
    reply = note.text;
    state = note.state;
  } else {
    switch (outcome.kind) {
      case 'reply':
        modelText = withoutForgedReceipts(outcome.text);
        if (modelText) {
          status = 'completed';
          reply = modelText;
        } else {
          // Not "Done.": nothing says anything was done. The receipts below say what was.
          status = 'failed';
          reply = NO_ANSWER_TEXT;
          error = 'the model gave an empty answer, also when asked again';
        }
        break;
      case 'limit': {
        status = 'paused';
        const calls = (await skillCallsOfTurn(database, turnId, { direct: true })).map(
          (row) => `${row.command} (${row.status})`,
        );
        reply = progressReport(outcome.reason, board, calls);
        state = { kind: 'limit', specs, results };
        options.emit({ type: 'limit', limit: outcome.reason, detail: reply });
        break;
      }
      case 'confirmation': {
        status = 'paused';
        modelText = withoutForgedReceipts(outcome.text);
        const done = results
          .filter((result) => result.status === 'completed')
          .map((result) => `- ${result.agentId}: done`);
        reply = [
          modelText,
          `Before I run \`${outcome.pending.command}\` I need your OK: the safety check said ${outcome.pending.reasoning}`,
          done.length ? `Already done:\n${done.join('\n')}` : '',
          'Reply "yes" to run exactly that command once, or tell me what to do instead.',
        ]
          .filter(Boolean)
          .join('\n\n');
        state = { kind: 'confirmation', pending: outcome.pending, specs, results };
        break;
      }
      default:
        status = 'failed';
        reply = `Sorry, I could not finish that: ${outcome.error}`;
    }
  }
  const recorded = options.ranNothing ? [] : await recordedReceipts(database, turnId);
  const receipts = [...recorded, ...unbackedClaims(modelText, recorded)];
  if (options.receiptLines) reply = withReceiptLines(reply, receipts);
  // The reply joins the conversation in the statement that ends the turn: never one without the other.
  const usage = await finishTurn(
    database,
    { id: turnId, conversationId: claimed.conversation.id, userId: claimed.user.id },
    {
      status: status as 'completed' | 'paused' | 'interrupted' | 'failed',
      reply,
      stopReason: options.stopped && outcome.kind !== 'reply' ? 'interrupted' : outcome.kind,
      error,
      state,
      receipts: receiptsJson(receipts),
    },
  );
  options.emit({ type: 'turn_end', turnId, status, reply, usage, receipts });
  if (deps.afterTurn && status !== 'failed') {
    // Awaited so the follow-up work (a queued compaction job) is stored before the reply goes out.
    await deps
      .afterTurn({ turnId, conversationId: claimed.conversation.id, userId: claimed.user.id })
      .catch((failure) => deps.logger.error({ err: failure, turnId }, 'after-turn work failed'));
  }
  return {
    reply,
    conversationId: claimed.conversation.id,
    turnId,
    status,
    usage,
    duplicate: false,
    receipts,
  };
}
