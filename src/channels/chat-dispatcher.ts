import type { Database } from '../db/index.ts';
import type { JobQueue } from '../jobs/index.ts';
import type { Logger } from '../logging/index.ts';
import { chatsWithOpenInbound } from './inbound-store.ts';
import type { ChannelName } from './types.ts';

export const INBOUND_JOB = 'channels.inbound';

const SWEEP_AGE_MS = 20_000;
/** How long a queued, unstarted job is trusted to cover a chat's next messages. */
const QUEUED_JOB_COVERS_MS = 1_000;

type Chat = { channel: ChannelName; chatId: string };

/**
 * Queues the processing job of chats with new messages, off the webhook's path: coalesced
 * per chat (a job this process queued and has not started yet covers the chat's next
 * messages), and a sweep for messages whose job was never queued (a process that died right
 * after storing one): at start, then as part of the process's one recovery sweep.
 */
export class ChatDispatcher {
  readonly #deps: { database: Database; jobs: JobQueue; logger: Logger; now: () => Date };
  readonly #pending = new Map<string, Chat>();
  /** Chats whose job this process queued and has not started, by when. */
  readonly #queued = new Map<string, number>();
  #draining: Promise<void> | null = null;

  constructor(deps: { database: Database; jobs: JobQueue; logger: Logger; now: () => Date }) {
    this.#deps = deps;
  }

  async start(): Promise<void> {
    await this.sweep(null);
  }

  async stop(): Promise<void> {
    while (this.#draining) await this.#draining;
  }

  /** Queues chats with messages open for a while (their job was lost); the recovery sweep calls it. */
  sweepStale(): Promise<void> {
    return this.sweep(new Date(this.#deps.now().getTime() - SWEEP_AGE_MS));
  }

  /** Queues the chat's job soon (unless a queued job will cover it). */
  dispatch(channel: ChannelName, chatId: string): void {
    const key = `${channel}:${chatId}`;
    const queuedAt = this.#queued.get(key);
    if (queuedAt !== undefined && Date.now() - queuedAt < QUEUED_JOB_COVERS_MS) return;
    this.#pending.set(key, { channel, chatId });
    this.#draining ??= this.#drain().finally(() => {
      this.#draining = null;
      const [next] = this.#pending.values();
      if (next) this.dispatch(next.channel, next.chatId);
    });
  }

  /** The chat's job started: from now on a new message needs a new job. */
  started(channel: string, chatId: string): void {
    this.#queued.delete(`${channel}:${chatId}`);
  }

  /** Queues every chat with open messages received before `before` (all of them with null). */
  async sweep(before: Date | null): Promise<void> {
    try {
      for (const chat of await chatsWithOpenInbound(this.#deps.database, before)) {
        this.dispatch(chat.channel as ChannelName, chat.chatId);
      }
    } catch (error) {
      this.#deps.logger.warn({ err: error }, 'channels: could not look for unprocessed messages');
    }
  }

  async #drain(): Promise<void> {
    while (this.#pending.size > 0) {
      const [key, chat] = this.#pending.entries().next().value!;
      this.#pending.delete(key);
      try {
        await this.#deps.jobs.enqueue(INBOUND_JOB, chat);
        this.#queued.set(key, Date.now());
      } catch (error) {
        this.#deps.logger.warn(
          { err: error, channel: chat.channel },
          'channels: could not queue a chat; the sweep retries',
        );
      }
    }
  }
}
