import { converse, type TurnEngine } from '../agents/index.ts';
import type { ResolvedConfig } from '../config/index.ts';
import { type Database, KeyedLock } from '../db/index.ts';
import { RefusedError, StewardError } from '../errors.ts';
import type { JobQueue } from '../jobs/index.ts';
import type { Logger } from '../logging/index.ts';
import { noteIdentityActivity } from '../users/index.ts';
import type { VoiceService } from '../voice/index.ts';
import { resolveSender } from './access.ts';
import { INBOUND_JOB } from './chat-dispatcher.ts';
import { markInbound, openInboundOfChat } from './inbound-store.ts';
import { queueOutbound } from './outbox.ts';
import { pairingCodeFor, pairingOffered } from './pairing.ts';
import { replyParts, typingIndicator } from './reply-parts.ts';
import {
  GREETING_TEXT,
  HELP_TEXT,
  INTERRUPTED_TEXT,
  NEW_CONVERSATION_TEXT,
  NOTHING_TO_SAY,
  pairingText,
  UNSUPPORTED_TEXT,
} from './texts.ts';
import type { ChannelAdapter, ChannelName, StoredInbound } from './types.ts';
import { hearVoiceNote, lastTranscriptText, spokenReplyParts } from './voice-replies.ts';

/** A message that failed this many times is given up with an apology (a poison message never loops). */
const MAX_INBOUND_ATTEMPTS = 8;

/** The part of the turn engine the chat processor uses. */
export type TurnHandler = Pick<TurnEngine, 'handle' | 'appendNote'>;

export type ChatProcessorDeps = {
  database: Database;
  engine: TurnHandler;
  config: () => ResolvedConfig;
  logger: Logger;
  now: () => Date;
  adapter: (name: ChannelName) => ChannelAdapter | undefined;
  /** Transcribes voice notes and speaks replies; without it voice notes get a note asking to write. */
  voice?: VoiceService;
  /** The chat's job holds the chat's lock: a message stored from now on needs a new job (must not throw). */
  onStarted: (channel: ChannelName, chatId: string) => void;
  /** The chat's replies are in the outbox: send them now (must not throw). */
  onReplied: () => void;
};

/**
 * The job-time half of the gateway: runs the `channels.inbound` job of a chat — its open
 * messages one at a time in arrival order, each admitted (or offered a pairing code), answered
 * locally or through `converse()`, and settled with its reply's parts in the outbox.
 */
export class ChatProcessor {
  readonly #deps: ChatProcessorDeps;
  readonly #chats: KeyedLock;
  readonly #processing = new Set<Promise<unknown>>();

  constructor(deps: ChatProcessorDeps) {
    this.#deps = deps;
    this.#chats = new KeyedLock(deps.database);
  }

  /** Chats being processed now (stopping waits a while for them to store their replies). */
  get inFlight(): Promise<unknown>[] {
    return [...this.#processing];
  }

  /** Declares the inbound job (every process that may run it): one job per chat with open messages. */
  async register(jobs: JobQueue): Promise<void> {
    await jobs.register<{ channel: ChannelName; chatId: string }>(
      INBOUND_JOB,
      async (data) => {
        await this.processChat(data.channel, data.chatId);
      },
      {
        retryLimit: MAX_INBOUND_ATTEMPTS,
        retryDelaySeconds: 2,
        retryBackoff: true,
        expireInSeconds: 900,
        // No singleton policy: a job left active by a dead process would block its chat's next
        // job until it expires. Duplicate jobs are harmless (chat lock, idempotent processing).
        concurrency: 4,
      },
    );
  }

  /**
   * Processes the chat's open messages in arrival order, under the chat's lock (in this process
   * and across processes). Idempotent: a message already done is skipped; a retried turn is
   * not run twice (the engine de-duplicates by channel message id) and its reply is stored once.
   */
  async processChat(channel: ChannelName, chatId: string): Promise<void> {
    const { database } = this.#deps;
    const key = `${channel}:${chatId}`;
    const work = this.#chats.run(`channel-chat:${key}`, async () => {
      // From here on a new message of this chat needs a new job (unless this loop sees it).
      this.#deps.onStarted(channel, chatId);
      for (let round = 0; round < 100; round++) {
        const open = await openInboundOfChat(database, channel, chatId);
        if (open.length === 0) break;
        for (const message of open) await this.#processOne(message);
      }
    });
    this.#processing.add(work);
    try {
      await work;
    } finally {
      this.#processing.delete(work);
    }
    this.#deps.onReplied();
  }

  async #processOne(message: StoredInbound): Promise<void> {
    const { database, logger } = this.#deps;
    if (message.attempts >= MAX_INBOUND_ATTEMPTS) {
      logger.error({ inboundId: message.id, channel: message.channel }, 'giving up on an inbound message');
      await this.#reply(
        message,
        message.userId,
        'Sorry, something went wrong with that message; please send it again.',
        'failed',
      );
      return;
    }
    const userId = await resolveSender(database, message, this.#deps.config().channels.allow);
    if (!userId) {
      const once = this.#deps.adapter(message.channel)?.capabilities.pairingReplyOnce === true;
      const toldBefore = once && (await pairingOffered(database, message.channel, message.senderId));
      const { request } = await pairingCodeFor(database, message, this.#deps.now());
      if (toldBefore) {
        // Told once already: silence (a code made now waits in `steward pairing list`).
        logger.info({ channel: message.channel }, 'unknown sender wrote again: not answered');
        await markInbound(database, message.id, { status: 'pairing', userId: null });
        return;
      }
      logger.info({ channel: message.channel, code: request.code }, 'unknown sender: pairing code sent');
      await this.#reply(message, null, pairingText(request), 'pairing', 'pairing');
      return;
    }
    await noteIdentityActivity(database, message.channel, message.senderId, {
      directChatId: message.meta.group ? null : message.chatId,
      displayName: message.senderName ?? null,
      at: this.#deps.now(),
    });
    if (message.kind === 'unsupported') return this.#reply(message, userId, UNSUPPORTED_TEXT);
    const command = message.kind === 'command' ? /^\/(\w+)(?:@\S+)?\s*([\s\S]*)$/.exec(message.text) : null;
    const name = command?.[1]?.toLowerCase();
    if (name === 'start' || name === 'help')
      return this.#reply(message, userId, name === 'start' ? GREETING_TEXT : HELP_TEXT);
    if (name === 'transcript') {
      return this.#reply(message, userId, await lastTranscriptText(database, message));
    }
    let text = message.text;
    const spoken = message.kind === 'voice';
    if (spoken) {
      const heard = await hearVoiceNote(
        { database, logger, voice: this.#deps.voice, adapter: this.#deps.adapter(message.channel) },
        message,
        userId,
      );
      if ('reply' in heard) return this.#reply(message, userId, heard.reply);
      text = heard.transcript;
    }
    if (!text.trim()) return this.#reply(message, userId, HELP_TEXT);
    await markInbound(database, message.id, { status: 'processing', userId });
    const typing = typingIndicator(this.#deps.adapter(message.channel), message, this.#deps.logger);
    try {
      const exchange = await converse(
        { engine: this.#deps.engine, database },
        {
          userId,
          surface: message.channel,
          text,
          options: {
            channelMessageId: message.channelMessageId,
            voice: spoken,
            // `/new` starts over; `/new <text>` asks in a new conversation.
            commands: message.kind === 'command',
            // Counted at the webhook, before the message was stored: a stored message is answered.
            admitted: true,
            observe: typing.emit,
          },
        },
      );
      const conversed = await exchange.result;
      if (conversed.kind === 'new_conversation') return this.#reply(message, userId, NEW_CONVERSATION_TEXT);
      const { outcome } = conversed;
      if (outcome.duplicate && (outcome.status as string) === 'running') {
        // Another worker is still running this turn (or its crash is not yet recovered): retry later.
        throw new StewardError(
          'turn_in_progress',
          `the turn of inbound message ${message.id} is still running`,
        );
      }
      await this.#reply(
        message,
        userId,
        outcome.reply || (outcome.status === 'interrupted' ? INTERRUPTED_TEXT : NOTHING_TO_SAY),
        'done',
        'reply',
        spoken,
      );
    } catch (error) {
      // A message the engine refuses (too long, unreadable) gets the reason; anything else retries.
      if (error instanceof RefusedError && error.code === 'invalid_message') {
        return this.#reply(message, userId, error.message);
      }
      throw error;
    } finally {
      typing.stop();
    }
  }

  /**
   * Stores the reply's parts under keys unique to the inbound message, and settles the message.
   * `answer`: the turn's answer, spoken when the user's preference and the channel allow
   * (`toVoiceNote`: it answers a voice note); written, with a notice, when speech fails.
   */
  async #reply(
    message: StoredInbound,
    userId: string | null,
    text: string,
    status: 'done' | 'pairing' | 'failed' = 'done',
    keyPrefix = 'reply',
    toVoiceNote: boolean | null = null,
  ): Promise<void> {
    const adapter = this.#deps.adapter(message.channel);
    const target = {
      channel: message.channel,
      chatId: message.chatId,
      meta: message.meta,
      userId,
      inboundId: message.id,
    };
    const key = `${keyPrefix}:${message.id}`;
    const parts =
      toVoiceNote !== null && userId
        ? await spokenReplyParts(
            { voice: this.#deps.voice, adapter },
            { target, userId, text, key, toVoiceNote },
          )
        : replyParts(adapter, target, text, key);
    await this.#deps.database.transaction(async (tx) => {
      await queueOutbound(tx, parts);
      await markInbound(tx, message.id, { status, userId });
    });
  }
}
