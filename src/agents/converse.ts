import type { Database } from '../db/index.ts';
import { createConversation } from '../memory/index.ts';
import { eventStream } from './event-stream.ts';
import type { TurnEvent } from './events.ts';
import type { TurnEngine, TurnInput, TurnOutcome } from './turn-engine.ts';

/**
 * The one way into the engine. `/api/chat`, the dashboard chat, `/v1/chat/completions`,
 * `/api/voice`, the channel gateway, scheduled workflow runs and `steward chat` each turn their
 * request into a `Message` and read back an `Exchange`; nothing else calls the engine.
 */
export type ConverseDeps = {
  engine: Pick<TurnEngine, 'handle'>;
  database: Database;
  /**
   * The per-user inbound limit, counted before anything of the message is stored. Throws a
   * RefusedError (`rate_limited`) over the limit. Absent: this surface is not limited.
   */
  rateLimit?: { check(message: { userId: string }): Promise<void> };
};

export type Message = {
  userId: string;
  /** Where the message came in (`api`, `web`, `openai`, `voice`, `cli`, `scheduled`, a chat channel): the turn's channel. */
  surface: string;
  text: string;
  options?: MessageOptions;
};

export type MessageOptions = Omit<TurnInput, 'userId' | 'text' | 'channel' | 'emit'> & {
  /** `/new` starts a new conversation (no turn); `/new <text>` runs `<text>` in a new one. */
  commands?: boolean;
  /**
   * The rate limit was already counted for this message: a voice upload before its costly
   * transcription, a chat channel's message at its webhook, before it was stored.
   */
  admitted?: boolean;
  /** Which of the turn's events `events` yields (default: none). */
  stream?: (event: TurnEvent) => boolean;
  /** Sees every event as it happens, synchronously (a typing indicator). Must be quick. */
  observe?: (event: TurnEvent) => void;
};

export type Conversed =
  | { kind: 'turn'; outcome: TurnOutcome }
  | { kind: 'new_conversation'; conversationId: string };

/** A started exchange: the turn's events as they happen, and how it ended. */
export type Exchange = {
  /** Ends when the turn does; yields only what `options.stream` selects. */
  events: AsyncIterable<TurnEvent>;
  /** Rejects with a RefusedError for a message the engine will not take, else only for bugs and outages. */
  result: Promise<Conversed>;
};

const NEW_COMMAND = /^\/new(?:@\S+)?(?:\s+([\s\S]*))?$/i;

/**
 * Admits and starts one message. Throws (before anything is stored) only when the rate limit
 * refuses it; every later refusal or failure arrives through `result`.
 */
export async function converse(deps: ConverseDeps, message: Message): Promise<Exchange> {
  const { commands = false, admitted = false, stream, observe, ...turnOptions } = message.options ?? {};
  let text = message.text;
  let { newConversation, conversationId } = turnOptions;
  const command = commands ? NEW_COMMAND.exec(text.trim()) : null;
  if (command) {
    const rest = command[1]?.trim() ?? '';
    if (!rest) {
      const conversation = await createConversation(deps.database, message.userId, message.surface);
      // No turn: the stream has no events and is over at once (a reader's loop must end).
      const none = eventStream<TurnEvent>();
      none.end();
      return {
        events: none.iterable,
        result: Promise.resolve({ kind: 'new_conversation', conversationId: conversation.id }),
      };
    }
    text = rest;
    newConversation = true;
    conversationId = undefined;
  }
  if (!admitted) await deps.rateLimit?.check({ userId: message.userId });
  const events = eventStream<TurnEvent>();
  const result = deps.engine
    .handle({
      ...turnOptions,
      userId: message.userId,
      text,
      channel: message.surface,
      conversationId,
      newConversation,
      emit: (event) => {
        observe?.(event);
        if (stream?.(event)) events.push(event);
      },
    })
    .then((outcome): Conversed => ({ kind: 'turn', outcome }))
    .finally(() => events.end());
  // A caller that only reads `events` must not see an unhandled rejection; `result` still rejects.
  result.catch(() => undefined);
  return { events: events.iterable, result };
}

/** The outcome of an exchange that cannot be a `/new` command (its surface did not ask for commands). */
export async function turnOutcome(exchange: Exchange): Promise<TurnOutcome> {
  const conversed = await exchange.result;
  if (conversed.kind !== 'turn') throw new Error('a /new command was taken without options.commands');
  return conversed.outcome;
}
