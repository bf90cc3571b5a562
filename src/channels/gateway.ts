import type { ResolvedConfig } from '../config/index.ts';
import type { Database, Queryable } from '../db/index.ts';
import type { JobQueue } from '../jobs/index.ts';
import type { Logger } from '../logging/index.ts';
import { latestUserConversation } from '../memory/index.ts';
import { InboundRateLimiter, RateLimitedError } from '../security/index.ts';
import { ensureUser, getUser, linkIdentity, listIdentities } from '../users/index.ts';
import type { VoiceService } from '../voice/index.ts';
import { ChatDispatcher } from './chat-dispatcher.ts';
import { ChatProcessor, type TurnHandler } from './chat-processor.ts';
import { type Delivery, DeliveryRouter, type DeliveryTrouble } from './delivery-router.ts';
import type { DeliverySource } from './delivery-store.ts';
import { inboundStored, storeInbound } from './inbound-store.ts';
import { queueOutbound } from './outbox.ts';
import { OutboxSender, type OutboxSenderDeps } from './outbox-sender.ts';
import { claimPairing, type PairingRequest, settlePairingsOf } from './pairing.ts';
import { replyParts } from './reply-parts.ts';
import { type ChannelStatus, channelsStatus } from './status.ts';
import { GREETING_TEXT } from './texts.ts';
import type { ChannelAdapter, ChannelName, GatewayPort, InboundMessage } from './types.ts';

export type GatewayDeps = {
  database: Database;
  jobs: JobQueue;
  engine: TurnHandler;
  adapters: ChannelAdapter[];
  config: () => ResolvedConfig;
  logger: Logger;
  now?: () => Date;
  sender?: Partial<Omit<OutboxSenderDeps, 'database' | 'adapter' | 'logger'>>;
  problems?: Partial<Record<ChannelName, string[]>>;
  /** Transcribes voice notes and speaks replies; without it voice notes get a note asking to write. */
  voice?: VoiceService;
  /** Told when a delivery failed on a channel and went to the next one or to the inbox (the owner's alert). */
  onDeliveryTrouble?: (trouble: DeliveryTrouble) => void;
};

export type { Delivery };

export type PairingApproval =
  | { ok: true; request: PairingRequest; userId: string }
  | { ok: false; problem: string };

/**
 * The message gateway: stores what channels receive (before they acknowledge) and queues its
 * chat's job, which the chat processor runs one chat at a time in arrival order; every reply and
 * delivery leaves through the outbox. Strangers get a pairing code; nothing of theirs reaches the model.
 */
export class Gateway implements GatewayPort {
  readonly sender: OutboxSender;
  readonly #deps: GatewayDeps;
  readonly #adapters: Map<ChannelName, ChannelAdapter>;
  readonly #rateLimiter: InboundRateLimiter;
  readonly #now: () => Date;
  #started = false;
  readonly #dispatcher: ChatDispatcher;
  readonly #deliveries: DeliveryRouter;
  readonly #processor: ChatProcessor;

  constructor(deps: GatewayDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? (() => new Date());
    this.#rateLimiter = new InboundRateLimiter(deps.database, () => deps.config().limits);
    this.#adapters = new Map(deps.adapters.map((adapter) => [adapter.name, adapter]));
    this.#dispatcher = new ChatDispatcher({
      database: deps.database,
      jobs: deps.jobs,
      logger: deps.logger,
      now: this.#now,
    });
    this.#deliveries = new DeliveryRouter({
      database: deps.database,
      adapter: (name) => this.#adapters.get(name),
      toConversation: async (userId, text) => {
        const conversation = await latestUserConversation(deps.database, userId, 'cli');
        // Through the engine: in order with the conversation's turns, never inside a running one.
        await deps.engine.appendNote({ userId, conversationId: conversation.id, text });
        return conversation.id;
      },
      onTrouble: deps.onDeliveryTrouble,
      logger: deps.logger,
      now: this.#now,
    });
    this.sender = new OutboxSender({
      database: deps.database,
      logger: deps.logger,
      adapter: (name) => this.#adapters.get(name),
      now: this.#now,
      onFinal: (tx, row, outcome) => this.#deliveries.settled(tx, row, outcome),
      ...deps.sender,
    });
    this.#processor = new ChatProcessor({
      database: deps.database,
      engine: deps.engine,
      config: deps.config,
      logger: deps.logger,
      now: this.#now,
      adapter: (name) => this.#adapters.get(name),
      voice: deps.voice,
      onStarted: (channel, chatId) => this.#dispatcher.started(channel, chatId),
      onReplied: () => this.sender.kick(),
    });
  }

  get database(): Database {
    return this.#deps.database;
  }

  /** Configuration problems found at start-up, per channel (doctor and `steward channels` show them). */
  get problems(): Partial<Record<ChannelName, string[]>> {
    return this.#deps.problems ?? {};
  }

  /** The operator view (`steward channels`). */
  status(): Promise<ChannelStatus[]> {
    const adapters = this.adapters;
    return channelsStatus(this.#deps.database, this.#deps.config(), {
      configured: adapters.map((adapter) => adapter.name),
      modes: Object.fromEntries(adapters.map((adapter) => [adapter.name, adapter.mode ?? 'webhook'])),
      problems: this.problems,
    });
  }

  get adapters(): ChannelAdapter[] {
    return [...this.#adapters.values()];
  }

  adapter(name: ChannelName): ChannelAdapter | undefined {
    return this.#adapters.get(name);
  }

  now(): Date {
    return this.#now();
  }

  /** Declares the inbound job (every process that may run it): one job per chat with open messages. */
  register(): Promise<void> {
    return this.#processor.register(this.#deps.jobs);
  }

  /** Starts the channels (polling, webhook registration) and the outbox; queues work a restart left. */
  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    this.sender.start();
    await this.#dispatcher.start();
    for (const adapter of this.#adapters.values()) {
      await adapter
        .start?.(this)
        .catch((error) =>
          this.#deps.logger.error({ err: error, channel: adapter.name }, 'channel failed to start'),
        );
    }
  }

  /** Queues the processing of stored messages whose job was lost (part of the recovery sweep). */
  sweep(): Promise<void> {
    return this.#dispatcher.sweepStale();
  }

  /**
   * Stops the channels. Chats being processed get up to 5 s to store their replies, and the
   * outbox up to 5 s to send what is due, so a reply of a turn that finished while Steward was
   * stopping leaves now rather than after the restart (anything left is sent then, once).
   */
  async stop(): Promise<void> {
    await this.#dispatcher.stop();
    await settleWithin(this.#processor.inFlight, 5_000);
    await settleWithin([this.sender.flush()], 5_000);
    await this.sender.stop();
    for (const adapter of this.#adapters.values()) await adapter.stop?.().catch(() => undefined);
    this.#started = false;
  }

  /**
   * Stores the message; that is all the webhook waits for. Its chat's job is queued right
   * after, in the background (coalesced per chat): a crash in between leaves the message
   * stored and open, and the sweep queues it.
   */
  async receive(message: InboundMessage): Promise<{ id: number; duplicate: boolean }> {
    // Rate limits refuse a message before it is stored (429: the platform sends it again);
    // a redelivery of one already stored is always taken.
    try {
      await this.#rateLimiter.check({
        userId: `${message.channel}:${message.senderId}`,
        channel: message.channel,
      });
    } catch (error) {
      if (!(error instanceof RateLimitedError)) throw error;
      if (!(await inboundStored(this.#deps.database, message.channel, message.channelMessageId))) throw error;
    }
    const stored = await storeInbound(this.#deps.database, message);
    if (!stored.duplicate) this.#dispatcher.dispatch(message.channel, message.chatId);
    return stored;
  }

  /** Runs the chat's job now: its open messages, in arrival order (the chat processor). */
  processChat(channel: ChannelName, chatId: string): Promise<void> {
    return this.#processor.processChat(channel, chatId);
  }

  /**
   * Sends `message` (markdown) to the user's primary channel — the one set, else the one they
   * last wrote from — through the outbox, recorded as a delivery the outbox's outcome settles:
   * on failure it goes to their next channel, then to their dashboard inbox (DeliveryRouter).
   * A user with no reachable channel finds it as an assistant message in their latest conversation.
   */
  async deliver(
    userId: string,
    message: string,
    options: { source?: DeliverySource } = {},
  ): Promise<Delivery> {
    const delivery = await this.#deliveries.deliver(userId, message, options.source ?? 'notice');
    if (delivery.delivered === 'channel') this.sender.kick();
    return delivery;
  }

  /**
   * Admits the sender behind a pairing code and greets them: as the new user
   * `<channel>:<sender>`, or — with `as` — joined to that existing user (`local`: the owner), whose
   * memory, tasks and history they then share. An unknown `as` leaves the code pending.
   */
  async approvePairing(code: string, options: { as?: string } = {}): Promise<PairingApproval> {
    const { database } = this.#deps;
    const joinTo = options.as;
    const outcome = await database.transaction(async (tx) => {
      if (joinTo !== undefined && !(await getUser(tx, joinTo))) return { problem: 'unknown_user' as const };
      const claimed = await claimPairing(
        tx,
        code,
        (request) => joinTo ?? `${request.channel}:${request.senderId}`,
        this.#now(),
      );
      if ('problem' in claimed) return claimed;
      await ensureUser(tx, claimed.userId!);
      await linkIdentity(tx, {
        channel: claimed.channel,
        externalId: claimed.senderId,
        userId: claimed.userId!,
        displayName: claimed.senderName,
      });
      await this.#greet(tx, claimed);
      return claimed;
    });
    if ('problem' in outcome) {
      const problem = {
        unknown: `No pairing code ${code}: check it against \`steward pairing list\`.`,
        expired: `The pairing code ${code} has expired: the sender gets a new one by writing again.`,
        approved: `The pairing code ${code} was already approved.`,
        unknown_user: `No user "${joinTo}": --as takes an existing user (local is the owner); leave it out to admit the sender as a new user.`,
      }[outcome.problem];
      return { ok: false, problem };
    }
    this.sender.kick();
    return { ok: true, request: outcome, userId: outcome.userId! };
  }

  /** Whether the owner (`local`) has a chat identity yet: until then, a pairing may well be the owner's own phone. */
  async ownerPaired(): Promise<boolean> {
    return (await listIdentities(this.#deps.database, 'local')).length > 0;
  }

  /** Joins `channel:senderId` to `userId` (created if new), settling any pending pairing. */
  async linkSender(channel: string, senderId: string, userId: string): Promise<void> {
    await this.#deps.database.transaction(async (tx) => {
      await ensureUser(tx, userId);
      await linkIdentity(tx, { channel, externalId: senderId, userId });
      await settlePairingsOf(tx, channel, senderId, userId);
    });
  }

  async #greet(db: Queryable, request: PairingRequest): Promise<void> {
    const parts = replyParts(
      this.#adapters.get(request.channel),
      {
        channel: request.channel,
        chatId: request.chatId,
        meta: request.meta,
        userId: request.userId,
        inboundId: null,
      },
      GREETING_TEXT,
      `greeting:${request.code}`,
    );
    await queueOutbound(db, parts);
  }
}

/** Waits for `work` to settle, or `ms`, whichever comes first. */
async function settleWithin(work: Promise<unknown>[], ms: number): Promise<void> {
  if (work.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.allSettled(work),
    new Promise((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
}
