import type { TurnEvent } from '../agents/index.ts';
import type { Logger } from '../logging/index.ts';
import type { NewOutbound } from './outbox.ts';
import { splitMessage } from './split-message.ts';
import { NOTHING_TO_SAY } from './texts.ts';
import type { ChannelAdapter, ChannelName, ChatMeta } from './types.ts';

const DEFAULT_MAX_LENGTH = 4000;
const TYPING_EVERY_MS = 4_000;

/**
 * A reply as outbox rows: split at the channel's limit (measured after formatting), each part
 * keyed `<key>:<index>` so storing the same reply again stores nothing.
 */
export function replyParts(
  adapter: ChannelAdapter | undefined,
  target: {
    channel: ChannelName;
    chatId: string;
    meta: ChatMeta;
    userId: string | null;
    inboundId: number | null;
  },
  text: string,
  key: string,
): NewOutbound[] {
  const limit = adapter?.capabilities.maxLength ?? DEFAULT_MAX_LENGTH;
  const measure = adapter ? (value: string) => adapter.format(value).length : undefined;
  const pieces = splitMessage(text, limit, measure);
  return (pieces.length ? pieces : [NOTHING_TO_SAY]).map((piece, index) => ({
    ...target,
    dedupeKey: `${key}:${index}`,
    text: piece,
  }));
}

/** The typing indicator, shown from `turn_start` until `turn_end`, refreshed every few seconds. */
export function typingIndicator(
  adapter: ChannelAdapter | undefined,
  chat: { chatId: string; meta: ChatMeta },
  logger: Logger,
): { emit: (event: TurnEvent) => void; stop(): void } {
  let timer: NodeJS.Timeout | null = null;
  const stop = () => {
    if (timer) clearInterval(timer);
    timer = null;
  };
  const typing = adapter?.typing?.bind(adapter);
  if (!typing || !adapter?.capabilities.typingIndicator) return { emit: () => {}, stop };
  const show = () =>
    void typing(chat.chatId, chat.meta).catch((error) =>
      logger.debug({ err: error, channel: adapter.name }, 'typing indicator failed'),
    );
  return {
    emit: (event) => {
      if (event.type === 'turn_start' && !timer) {
        show();
        timer = setInterval(show, TYPING_EVERY_MS);
      } else if (event.type === 'turn_end') stop();
    },
    stop,
  };
}
