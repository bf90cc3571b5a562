import type { InboundMessage } from '../types.ts';
import type { TelegramMessage, TelegramUpdate } from './telegram-update.ts';

/** Who the bot is: its id (from the token) and, once getMe answered, its username. */
export type BotIdentity = { id: number; username: string | null };

const UNSUPPORTED_KEYS = [
  'voice',
  'audio',
  'photo',
  'video',
  'video_note',
  'document',
  'sticker',
  'animation',
  'location',
  'contact',
  'poll',
] as const;

function addressedInGroup(
  message: TelegramMessage,
  text: string,
  bot: BotIdentity,
): { addressed: boolean; text: string } {
  const entities = message.entities ?? message.caption_entities ?? [];
  const handle = bot.username ? `@${bot.username.toLowerCase()}` : null;
  let addressed = message.reply_to_message?.from?.id === bot.id;
  let stripped = text;
  for (const entity of entities) {
    const value = text.slice(entity.offset, entity.offset + entity.length);
    if (entity.type === 'mention' && handle && value.toLowerCase() === handle) {
      addressed = true;
      stripped = stripped.replace(value, '');
    } else if (entity.type === 'text_mention' && entity.user?.id === bot.id) {
      addressed = true;
    } else if (
      entity.type === 'bot_command' &&
      entity.offset === 0 &&
      handle &&
      value.toLowerCase().endsWith(handle)
    ) {
      addressed = true;
    }
  }
  return { addressed, text: stripped.replace(/\s+/g, ' ').trim() };
}

/**
 * A Telegram update (checked by `parseTelegramUpdate`) as an InboundMessage, or null for what
 * Steward ignores: edits, channel posts, other bots, and in groups anything that neither
 * mentions the bot nor replies to it.
 */
export function normalizeTelegramUpdate(update: TelegramUpdate, bot: BotIdentity): InboundMessage | null {
  const message = update.message;
  if (!message?.from || message.from.is_bot) return null;
  const group = message.chat.type !== 'private';
  let text = (message.text ?? message.caption ?? '').trim();
  if (group) {
    const check = addressedInGroup(message, text, bot);
    if (!check.addressed) return null;
    text = check.text;
  }
  const isCommand = (message.entities ?? []).some(
    (entity) => entity.type === 'bot_command' && entity.offset === 0,
  );
  // A voice note (or an audio file) is heard: its caption, if any, is ignored.
  const audio = message.voice ?? message.audio;
  const unsupported = !audio && !text && UNSUPPORTED_KEYS.some((key) => key in message);
  const name =
    [message.from.first_name, message.from.last_name].filter(Boolean).join(' ') || message.from.username;
  return {
    channel: 'telegram',
    channelMessageId: `${message.chat.id}:${message.message_id}`,
    chatId: String(message.chat.id),
    senderId: String(message.from.id),
    senderName: name ?? null,
    kind: audio ? 'voice' : unsupported ? 'unsupported' : isCommand ? 'command' : 'text',
    text: audio ? '' : text,
    ...(audio
      ? {
          media: {
            id: audio.file_id,
            mimeType: audio.mime_type ?? (message.voice ? 'audio/ogg' : null),
            seconds: audio.duration,
            bytes: audio.file_size ?? null,
          },
        }
      : {}),
    meta: {
      ...(group ? { group: true, replyToMessageId: String(message.message_id) } : {}),
      ...(message.is_topic_message && message.message_thread_id
        ? { threadId: String(message.message_thread_id) }
        : {}),
    },
  };
}
