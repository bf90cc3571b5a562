import { randomUUID } from 'node:crypto';
import type { Database, Queryable } from '../db/index.ts';
import { errorMessage } from '../errors.ts';
import type { Logger } from '../logging/index.ts';
import { ensureUser, identitiesByPreference } from '../users/index.ts';
import {
  addToInbox,
  cancelOpenParts,
  type DeliveryAttempt,
  type DeliveryRow,
  type DeliverySource,
  insertDelivery,
  lockDelivery,
  partsOutcome,
  updateDelivery,
} from './delivery-store.ts';
import { type FinalOutcome, type OutboxRow, queueOutbound } from './outbox.ts';
import { replyParts } from './reply-parts.ts';
import type { ChannelAdapter, ChannelName } from './types.ts';

/** Where deliver() put a message: a channel's outbox, or the conversation of a user with no channel. */
export type Delivery = { deliveryId: string } & (
  | { delivered: 'channel'; channel: ChannelName; chatId: string; outboxIds: number[] }
  | { delivered: 'conversation'; conversationId: string }
);

/** A delivery that did not arrive where it was first sent (for the owner's alert). */
export type DeliveryTrouble = {
  deliveryId: string;
  userId: string;
  source: string;
  /** The channels that refused it, in order, each with the reason. */
  failed: Array<{ channel: string; error: string | null }>;
  /** Where it went instead: the next channel, or the user's dashboard inbox. */
  rerouted: { channel: string } | { inbox: true };
};

export type DeliveryRouterDeps = {
  database: Database;
  adapter(name: ChannelName): ChannelAdapter | undefined;
  /** Stores the message in the user's latest conversation; returns its id. */
  toConversation(userId: string, text: string): Promise<string>;
  /** Told after a delivery moved on to a fallback or to the inbox. Must not throw. */
  onTrouble?: (trouble: DeliveryTrouble) => void;
  logger: Logger;
  now: () => Date;
  randomId?: () => string;
};

type Target = { channel: ChannelName; chatId: string; adapter: ChannelAdapter };

/**
 * deliver(): everything that is not a reply. A delivery goes to the user's primary channel
 * through the outbox and is settled only by the outbox's outcome: `delivered` when the channel
 * returned a message id; on a refusal (or retries given up) it falls back to the user's next
 * channel — their other identities, most recently used first — and when none is left it waits
 * in their dashboard inbox (`failed`). An unknown outcome is `ambiguous` and not sent elsewhere
 * (it may have arrived); a copy waits in the inbox. A user with no reachable channel finds it in
 * their latest conversation.
 */
export class DeliveryRouter {
  readonly #deps: DeliveryRouterDeps;
  readonly #randomId: () => string;

  constructor(deps: DeliveryRouterDeps) {
    this.#deps = deps;
    this.#randomId = deps.randomId ?? randomUUID;
  }

  async deliver(userId: string, text: string, source: DeliverySource): Promise<Delivery> {
    const { database } = this.#deps;
    const deliveryId = `dl_${this.#randomId()}`;
    const target = await this.#nextTarget(database, userId, []);
    if (target) {
      const outboxIds = await database.transaction(async (tx) => {
        await insertDelivery(tx, {
          id: deliveryId,
          userId,
          source,
          text,
          status: 'pending',
          channel: target.channel,
          chatId: target.chatId,
          attempts: [this.#attempt(target, 'pending')],
          settled: false,
        });
        return queueOutbound(tx, this.#parts(target, userId, deliveryId, text, 0));
      });
      return { deliveryId, delivered: 'channel', channel: target.channel, chatId: target.chatId, outboxIds };
    }
    await ensureUser(database, userId);
    await insertDelivery(database, {
      id: deliveryId,
      userId,
      source,
      text,
      status: 'pending',
      channel: 'conversation',
      chatId: null,
      attempts: [],
      settled: false,
    });
    let conversationId: string;
    try {
      conversationId = await this.#deps.toConversation(userId, text);
    } catch (error) {
      await this.#settleConversation(deliveryId, 'failed', errorMessage(error)).catch(() => undefined);
      throw error;
    }
    await this.#settleConversation(deliveryId, 'delivered', null);
    return { deliveryId, delivered: 'conversation', conversationId };
  }

  async #settleConversation(id: string, status: 'delivered' | 'failed', error: string | null): Promise<void> {
    await updateDelivery(this.#deps.database, id, {
      status,
      channel: 'conversation',
      chatId: null,
      attempts: [
        { channel: 'conversation', chat_id: null, status, error, at: this.#deps.now().toISOString() },
      ],
    });
  }

  /**
   * Settles the delivery a finished outbox row belongs to, in the row's own transaction (see
   * OutboxSender `onFinal`). Returns the owner's alert to raise once committed, if any.
   */
  async settled(tx: Queryable, row: OutboxRow, outcome: FinalOutcome): Promise<(() => void) | undefined> {
    if (!row.deliveryId) return undefined;
    const delivery = await lockDelivery(tx, row.deliveryId);
    // A part of an attempt the delivery already moved on from changes nothing.
    if (delivery?.status !== 'pending') return undefined;
    if (delivery.channel !== row.channel || delivery.chatId !== row.chatId) return undefined;
    const chat = { channel: row.channel, chatId: row.chatId };
    if (outcome.status === 'failed') {
      await cancelOpenParts(
        tx,
        delivery.id,
        chat,
        `not sent: an earlier part of this delivery failed on ${row.channel}`,
      );
      return this.#fallBack(tx, delivery, outcome.error);
    }
    const parts = await partsOutcome(tx, delivery.id, chat);
    if (!parts) return undefined; // parts still to send
    const unknown = parts.find((part) => part.status === 'ambiguous');
    const attempts = this.#closeAttempt(
      delivery,
      unknown ? 'ambiguous' : 'delivered',
      unknown?.lastError ?? null,
    );
    if (unknown) {
      await addToInbox(tx, {
        userId: delivery.userId,
        deliveryId: delivery.id,
        text: delivery.text,
        note: `It may not have reached you on ${row.channel}: the send's outcome is unknown (${unknown.lastError ?? 'no answer'}), so it was not sent again.`,
      });
    }
    await updateDelivery(tx, delivery.id, {
      status: unknown ? 'ambiguous' : 'delivered',
      channel: delivery.channel,
      chatId: delivery.chatId,
      attempts,
    });
    return undefined;
  }

  /** The current attempt failed: the next channel, or the inbox when none is left. */
  async #fallBack(tx: Queryable, delivery: DeliveryRow, error: string): Promise<(() => void) | undefined> {
    const attempts = this.#closeAttempt(delivery, 'failed', error);
    const tried = attempts.map((attempt) => ({ channel: attempt.channel, chatId: attempt.chat_id }));
    const failed = attempts
      .filter((attempt) => attempt.status === 'failed')
      .map((attempt) => ({ channel: attempt.channel, error: attempt.error }));
    const next = await this.#nextTarget(tx, delivery.userId, tried);
    let rerouted: DeliveryTrouble['rerouted'];
    if (next) {
      attempts.push(this.#attempt(next, 'pending'));
      await queueOutbound(
        tx,
        this.#parts(next, delivery.userId, delivery.id, delivery.text, attempts.length - 1),
      );
      await updateDelivery(tx, delivery.id, {
        status: 'pending',
        channel: next.channel,
        chatId: next.chatId,
        attempts,
      });
      rerouted = { channel: next.channel };
    } else {
      const reasons = failed
        .map((attempt) => {
          const error = attempt.error ?? 'failed';
          // Adapters often name themselves in their errors ("slack: channel_not_found").
          const reason = error.startsWith(`${attempt.channel}: `)
            ? error.slice(attempt.channel.length + 2)
            : error;
          return `${attempt.channel}: ${reason}`;
        })
        .join('; ');
      await addToInbox(tx, {
        userId: delivery.userId,
        deliveryId: delivery.id,
        text: delivery.text,
        note: `Not delivered on any channel (${reasons}).`,
      });
      await updateDelivery(tx, delivery.id, { status: 'failed', channel: 'inbox', chatId: null, attempts });
      rerouted = { inbox: true };
    }
    this.#deps.logger.warn(
      { deliveryId: delivery.id, userId: delivery.userId, failed: failed.at(-1)?.channel, rerouted },
      'delivery failed on a channel; rerouted',
    );
    // The owner hears when the first channel fails and when nothing is left, not at every hop.
    // An alert about an alert's delivery would go the same way, and again: never raised.
    const { onTrouble } = this.#deps;
    const firstFailure = failed.length === 1;
    if (!onTrouble || delivery.source === 'alert' || !(firstFailure || 'inbox' in rerouted)) return undefined;
    const trouble: DeliveryTrouble = {
      deliveryId: delivery.id,
      userId: delivery.userId,
      source: delivery.source,
      failed,
      rerouted,
    };
    return () => onTrouble(trouble);
  }

  /** The delivery's attempts with the current (last, pending) one settled. */
  #closeAttempt(
    delivery: DeliveryRow,
    status: DeliveryAttempt['status'],
    error: string | null,
  ): DeliveryAttempt[] {
    const attempts = delivery.attempts.map((attempt) => ({ ...attempt }));
    const current = attempts.at(-1);
    if (current && current.status === 'pending') {
      current.status = status;
      current.error = error;
      current.at = this.#deps.now().toISOString();
    }
    return attempts;
  }

  #attempt(target: Target, status: DeliveryAttempt['status']): DeliveryAttempt {
    return {
      channel: target.channel,
      chat_id: target.chatId,
      status,
      error: null,
      at: this.#deps.now().toISOString(),
    };
  }

  /**
   * The user's first reachable identity not tried yet: the primary channel, then the others,
   * most recently used first. A channel that is off here is skipped.
   */
  async #nextTarget(
    db: Queryable,
    userId: string,
    tried: Array<{ channel: string; chatId: string | null }>,
  ): Promise<Target | null> {
    for (const identity of await identitiesByPreference(db, userId)) {
      const adapter = this.#deps.adapter(identity.channel as ChannelName);
      const chatId = adapter ? (identity.directChatId ?? directChatIdOf(adapter, identity.externalId)) : null;
      if (!adapter || !chatId) continue;
      if (tried.some((attempt) => attempt.channel === adapter.name && attempt.chatId === chatId)) continue;
      return { channel: adapter.name, chatId, adapter };
    }
    return null;
  }

  #parts(target: Target, userId: string, deliveryId: string, text: string, attempt: number) {
    return replyParts(
      target.adapter,
      { channel: target.channel, chatId: target.chatId, meta: {}, userId, inboundId: null },
      text,
      `delivery:${deliveryId}:${attempt}`,
    ).map((part) => ({ ...part, deliveryId }));
  }
}

/** Where a direct message to `senderId` goes on `adapter` (the id itself unless it says otherwise). */
function directChatIdOf(adapter: ChannelAdapter, senderId: string): string | null {
  return adapter.directChatId ? adapter.directChatId(senderId) : senderId;
}
