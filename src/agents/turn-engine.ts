import { randomUUID } from 'node:crypto';
import type { ChannelMode, ResolvedConfig } from '../config/index.ts';
import { type Database, KeyedLock } from '../db/index.ts';
import { RefusedError } from '../errors.ts';
import { emptyUsage, type LlmClient } from '../llm/index.ts';
import type { Logger } from '../logging/index.ts';
import {
  appendMessage,
  type Conversation,
  getConversation,
  HistoryWindows,
  type StoredMessage,
  setConversationMode,
} from '../memory/index.ts';
import type { SkillExecutor, SkillHandler, SkillSnapshot, UnavailableDomain } from '../skills/index.ts';
import { getUser, type User } from '../users/index.ts';
import type { TurnStatus } from './agent-types.ts';
import { type Emit, noEmit, type TurnEvent } from './events.ts';
import { recoverOrphanedTurn } from './paused-turns.ts';
import { receiptLinesShown, receiptsFromJson } from './receipts.ts';
import type { TurnMission } from './run-mission.ts';
import {
  type MemoryHook,
  prepareTurnContext,
  runClaimedTurn,
  type TurnObserver,
  type TurnOutcome,
  type TurnRef,
} from './run-turn.ts';
import { conversationOfMessage, messageProblem, turnMode, userOfMessage } from './turn-start.ts';
import {
  allOpenTurns,
  claimTurn,
  getTurn,
  queueTurn,
  type TurnRecord,
  turnOfChannelMessage,
  turnsToRun,
} from './turns.ts';

export type { TurnObserver, TurnOutcome, TurnRef, TurnStatus };

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
  /**
   * The message was spoken (a transcribed voice note) and the answer may be read aloud: the
   * turn runs in the voice mode (`channels.modes.voice`, default single_loop) and is asked for
   * a short, speakable answer. The conversation's own mode is left as it is.
   */
  voice?: boolean;
  /** Cancels the turn: it stops, and is recorded as interrupted with what it had done. */
  signal?: AbortSignal;
  emit?: Emit;
  /** Run one sub-agent on this mission instead of the orchestrator (scheduled workflow runs). */
  mission?: TurnMission;
  /**
   * `data`: the outcome carries the receipts but the reply text has no receipt lines (JSON
   * clients). Default `lines`: the lines end the reply where `replies.receipts` shows them.
   */
  receipts?: 'lines' | 'data';
};

export type EngineDeps = {
  database: Database;
  llm: LlmClient;
  executor: SkillExecutor;
  skills: () => SkillSnapshot;
  handlers: ReadonlyMap<string, SkillHandler>;
  config: () => ResolvedConfig;
  logger: Logger;
  memories?: MemoryHook;
  /** Skill domains this user cannot use now (a provider not connected): hidden from the model. */
  unavailableDomains?: (userId: string) => Promise<readonly UnavailableDomain[]>;
  /** Runs after each finished turn, before its reply is returned (queues compaction). Must be quick. */
  afterTurn?: (turn: { turnId: string; conversationId: string; userId: string }) => Promise<void>;
  /** Sees every event of every turn except text deltas (metrics, traces, alerts). Must be quick. */
  observe?: TurnObserver;
  /** Runs before a turn calls any model; a string refuses the turn with that message (the spend cap). */
  beforeTurn?: (turn: TurnRef) => Promise<string | null>;
  now?: () => Date;
  /** This instance's id (default: random); a turn's `owner`. */
  instanceId?: string;
};

/**
 * Told with a spoken message (in its context part, so the cached prompt prefix stays the same):
 * the answer will be read aloud.
 */
export const SPOKEN_TURN_NOTE =
  'This message was spoken (a transcribed voice note) and your answer will be read aloud: answer in a few short spoken sentences, with no markdown, tables, lists, links or code.';

const TERMINAL: ReadonlySet<string> = new Set(['completed', 'paused', 'interrupted', 'failed']);
const lockKey = (conversationId: string) => `conversation:${conversationId}`;
/** How many of the conversation's newest messages (after its summary) a turn reads. */
const HISTORY_LIMIT = 400;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs turns. A message is stored as a queued turn before anything else (de-duplicated by
 * channel message id); turns of one conversation run one at a time, in order, across every
 * instance on the database (a KeyedLock on `conversation:<id>`); a turn sees
 * only the turns completed before it. Whoever takes a conversation first recovers turns that
 * a dead instance left behind, once and in order.
 */
export class TurnEngine {
  readonly instanceId: string;
  readonly #deps: EngineDeps;
  readonly #now: () => Date;
  /** Each conversation's turns one at a time, in order, on every instance. */
  readonly #locks: KeyedLock;
  readonly #active = new Set<Promise<unknown>>();
  /** Conversations' histories as their last turns here read them (each read checks them). */
  readonly #history = new HistoryWindows();
  readonly #stopping = new AbortController();
  #registered: Promise<void> | null = null;
  #accepting = true;

  constructor(deps: EngineDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? (() => new Date());
    this.instanceId = deps.instanceId ?? randomUUID();
    this.#locks = new KeyedLock(deps.database);
  }

  /** Handles one user message end to end. Throws only for bad input or while shutting down. */
  async handle(input: TurnInput): Promise<TurnOutcome> {
    if (!this.#accepting) {
      throw new RefusedError(
        'shutting_down',
        'Steward is shutting down; send the message again in a moment.',
      );
    }
    const problem = messageProblem(input.text, this.#deps.config().limits.max_message_chars);
    if (problem) throw new RefusedError('invalid_message', problem);
    return this.#track(this.#handle(input));
  }

  async #handle(input: TurnInput): Promise<TurnOutcome> {
    const { database } = this.#deps;
    await this.#register();
    const { user, latest } = await userOfMessage(database, input);
    if (input.channelMessageId) {
      const seen = await turnOfChannelMessage(database, input.channel, input.channelMessageId);
      if (seen) return this.#duplicate(seen, user, input);
    }
    let conversation = await conversationOfMessage(database, user, input, latest);
    if (input.mode && input.mode !== conversation.mode) {
      await setConversationMode(database, conversation.id, input.mode);
      conversation = { ...conversation, mode: input.mode };
    }
    const queued = await queueTurn(database, {
      id: randomUUID(),
      conversationId: conversation.id,
      userId: user.id,
      mode: turnMode(this.#deps.config(), conversation, input.channel, input.voice ?? false),
      request: input.text,
      channel: input.channel,
      channelMessageId: input.channelMessageId ?? null,
      owner: this.instanceId,
    });
    if (queued.duplicate) return this.#duplicate(queued.turn, user, input);
    return this.#runInOrder(queued.turn, user, input, conversation);
  }

  /**
   * Stores an assistant message outside any turn (a delivered notification, a scheduled run's
   * result) in the conversation, in order with its turns.
   */
  async appendNote(note: { userId: string; conversationId: string; text: string }): Promise<number> {
    return this.#track(
      this.#locks.run(lockKey(note.conversationId), async () => {
        const stored = await appendMessage(this.#deps.database, {
          conversationId: note.conversationId,
          userId: note.userId,
          role: 'assistant',
          content: note.text,
        });
        return stored.id;
      }),
    );
  }

  /** Waits for every turn this process is running or has queued. */
  async drain(): Promise<void> {
    while (this.#active.size > 0) await Promise.allSettled([...this.#active]);
  }

  /**
   * Recovers turns that dead instances left queued or running (all conversations), each under
   * its conversation's lock and in order; returns how many it recovered. Conversations another
   * live instance is busy with are left to that instance, which recovers them when it next
   * takes the lock.
   */
  async recoverInterrupted(): Promise<number> {
    await this.#register();
    const { database } = this.#deps;
    let recovered = 0;
    const done = new Set<string>();
    for (const open of await allOpenTurns(database)) {
      if (done.has(open.conversationId) || open.owner === this.instanceId) continue;
      if (open.owner && (await database.instanceAlive(open.owner))) continue;
      done.add(open.conversationId);
      const result = await this.#track(
        this.#locks.tryRun(lockKey(open.conversationId), () =>
          this.#recoverBefore(open.conversationId, Number.MAX_SAFE_INTEGER, null).then(
            (result) => result.recovered,
          ),
        ),
      );
      recovered += result?.value ?? 0;
    }
    if (recovered) this.#deps.logger.warn({ recovered }, 'recovered turns left by a stopped instance');
    return recovered;
  }

  /** False once `shutdown` began: no new turn starts, and the recovery sweep leaves turns alone. */
  get accepting(): boolean {
    return this.#accepting;
  }

  /**
   * Stops taking turns; lets running turns finish for up to `graceMs`, then stops them (they
   * are recorded as interrupted, to be continued after the restart); then releases the instance.
   */
  async shutdown(graceMs: number): Promise<void> {
    this.#accepting = false;
    const deadline = setTimeout(() => this.#stopping.abort(new Error('shutting down')), graceMs);
    try {
      await this.drain();
    } finally {
      clearTimeout(deadline);
    }
    await this.#deps.database.releaseInstance(this.instanceId).catch(() => undefined);
  }

  #register(): Promise<void> {
    this.#registered ??= this.#deps.database.registerInstance(this.instanceId);
    return this.#registered;
  }

  #track<T>(work: Promise<T>): Promise<T> {
    this.#active.add(work);
    void work.then(
      () => this.#active.delete(work),
      () => this.#active.delete(work),
    );
    return work;
  }

  /**
   * `conversation` is the row read when the turn was queued: its summary and the point it was
   * folded through always change together, so the pair stays a consistent context even if
   * compaction moved on since.
   */
  #runInOrder(
    turn: TurnRecord,
    user: User,
    input: TurnInput,
    conversation?: Conversation,
  ): Promise<TurnOutcome> {
    const { database } = this.#deps;
    return this.#locks.run(lockKey(turn.conversationId), async () => {
      const { own, recovered, latestEnded, stored } = await this.#recoverBefore(
        turn.conversationId,
        turn.seq,
        turn.id,
        conversation,
      );
      // Still open (the usual case): the row just read is current; otherwise read how it ended.
      let current = own ?? (await getTurn(database, turn.id))!;
      if (current.status === 'running' && current.owner !== this.instanceId) {
        // Its instance died while running it (we hold the lock, so it is not running now).
        await recoverOrphanedTurn(database, current, this.#linesFor(current.channel));
        current = (await getTurn(database, turn.id))!;
      }
      if (current.status !== 'queued') return this.#storedOutcome(current, true);
      return this.#start(current, user, input.emit ?? noEmit, input.signal, {
        voice: input.voice ?? false,
        mission: input.mission,
        receipts: input.receipts,
        conversation,
        // Turns recovered just now ended after that read, and wrote to the conversation.
        latestEnded: recovered === 0 ? latestEnded : undefined,
        stored: recovered === 0 && current === own ? stored : undefined,
      });
    });
  }

  /**
   * Turns of the conversation up to `throughSeq` left queued or running by dead instances:
   * a running one is recovered (re-queued when it had run no skill, else interrupted with a
   * note); a queued one is then run. Call under the conversation lock. Returns how many, and
   * with `conversation` the history a turn run next reads, as it was before any recovery.
   */
  async #recoverBefore(
    conversationId: string,
    throughSeq: number,
    exceptId: string | null,
    conversation?: Conversation,
  ): Promise<{
    recovered: number;
    own: TurnRecord | undefined;
    latestEnded: TurnRecord | null;
    stored: StoredMessage[] | undefined;
  }> {
    const { database } = this.#deps;
    let recovered = 0;
    let own: TurnRecord | undefined;
    const {
      open: openOnes,
      latestEnded,
      stored,
    } = await turnsToRun(
      database,
      conversationId,
      throughSeq,
      conversation && {
        afterId: conversation.summaryThroughMessageId,
        limit: HISTORY_LIMIT,
        windows: this.#history,
      },
    );
    for (const open of openOnes) {
      if (open.id === exceptId) {
        own = open;
        continue;
      }
      if (open.owner === this.instanceId) continue;
      if (open.owner && (await database.instanceAlive(open.owner))) continue;
      recovered++;
      if (
        open.status === 'running' &&
        (await recoverOrphanedTurn(database, open, this.#linesFor(open.channel))) !== 'requeued'
      )
        continue;
      const queued = await getTurn(database, open.id);
      const user = await getUser(database, open.userId);
      if (queued?.status !== 'queued' || !user) continue;
      this.#deps.logger.warn(
        { turnId: open.id, conversationId },
        'running a turn a stopped instance left queued',
      );
      await this.#start(queued, user, noEmit, undefined);
    }
    return { recovered, own, latestEnded, stored };
  }

  async #start(
    turn: TurnRecord,
    user: User,
    listener: Emit,
    signal: AbortSignal | undefined,
    known: {
      voice?: boolean;
      mission?: TurnMission | undefined;
      receipts?: 'lines' | 'data' | undefined;
      /** Already read by the caller; read here when not given. */
      conversation?: Conversation | undefined;
      latestEnded?: TurnRecord | null | undefined;
      /** The conversation's history, read under its lock with nothing written since. */
      stored?: StoredMessage[] | undefined;
    } = {},
  ): Promise<TurnOutcome> {
    const { database } = this.#deps;
    const { voice = false, mission } = known;
    const conversation =
      known.conversation ?? (await getConversation(database, user.id, turn.conversationId));
    if (!conversation)
      throw new RefusedError('conversation_not_found', `No conversation ${turn.conversationId}.`);
    // Everything the turn reads of its conversation, loaded once (we hold its lock).
    const stored =
      known.stored ??
      (await this.#history.read(database, conversation.id, {
        limit: HISTORY_LIMIT,
        afterId: conversation.summaryThroughMessageId,
      }));
    const deps = { ...this.#deps, now: this.#now };
    // A turn re-run after a crash keeps the context its message was first sent with.
    let context = stored.find((message) => message.id === turn.userMessageId)?.context ?? null;
    if (turn.userMessageId === null && this.#deps.config().endpoint.provider !== 'none') {
      context = await prepareTurnContext(deps, { user, text: turn.request, stored });
      if (voice) context = context.replace(/<\/context>$/, `\n${SPOKEN_TURN_NOTE}\n</context>`);
    }
    const userMessageId = await claimTurn(database, turn, this.instanceId, context);
    if (userMessageId === null) return this.#storedOutcome((await getTurn(database, turn.id))!, true);
    return runClaimedTurn(
      deps,
      { turn, userMessageId, user, conversation, stored, context, latestEnded: known.latestEnded },
      {
        listener,
        ...(mission ? { mission } : {}),
        signal: signal ?? new AbortController().signal,
        shutdown: this.#stopping.signal,
        // A spoken answer is read aloud: its receipts travel as data only.
        receiptLines: known.receipts !== 'data' && !voice && this.#linesFor(turn.channel),
      },
    );
  }

  /** Whether replies on `channel` end with receipt lines (`replies.receipts`). */
  #linesFor(channel: string | null): boolean {
    return receiptLinesShown(this.#deps.config().replies.receipts, channel ?? 'api');
  }

  /** The same channel message again: wait for its turn to end and answer with what it said. */
  async #duplicate(turn: TurnRecord, user: User, input: TurnInput): Promise<TurnOutcome> {
    const { database } = this.#deps;
    for (;;) {
      const current = (await getTurn(database, turn.id))!;
      if (TERMINAL.has(current.status)) return this.#storedOutcome(current, true);
      if (current.owner === this.instanceId) {
        const queue = this.#locks.pending(lockKey(current.conversationId));
        if (queue) await queue;
        else await sleep(25);
      } else if (current.owner && (await database.instanceAlive(current.owner))) {
        // Its owner holds the conversation lock while it runs.
        await database.withAdvisoryLock(lockKey(current.conversationId), async () => {});
        if ((await getTurn(database, turn.id))?.status === 'queued') await sleep(200);
      } else {
        return this.#runInOrder(current, user, input);
      }
    }
  }

  #storedOutcome(turn: TurnRecord, duplicate: boolean): TurnOutcome {
    return {
      reply: turn.reply ?? '',
      conversationId: turn.conversationId,
      turnId: turn.id,
      status: turn.status as TurnStatus,
      usage: emptyUsage(),
      duplicate,
      receipts: receiptsFromJson(turn.receipts),
    };
  }
}

export type { TurnEvent };
