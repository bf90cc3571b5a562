import type { InboundMessage } from '../types.ts';
import type { DiscordMessage } from './discord-event.ts';

/** Message types a person writes: DEFAULT and REPLY (the rest are joins, pins, boosts…). */
const WRITTEN_TYPES = new Set([0, 19]);
/** `flags` bit of a voice message (Steward does not hear Discord's yet). */
const IS_VOICE_MESSAGE = 1 << 13;

/**
 * A MESSAGE_CREATE as an InboundMessage, or null for what Steward does not answer: bots
 * (itself included), webhooks, system messages, and in guild channels anything that neither
 * mentions the bot nor replies to it. The mention is removed from the text.
 */
export function normalizeDiscordMessage(
  message: DiscordMessage,
  botUserId: string | null,
): InboundMessage | null {
  const { author } = message;
  if (author.bot || message.webhook_id || author.id === botUserId) return null;
  if (!WRITTEN_TYPES.has(message.type)) return null;
  const inGuild = message.guild_id !== undefined;
  if (inGuild) {
    const mentioned = botUserId !== null && message.mentions.some((user) => user.id === botUserId);
    const repliedTo = botUserId !== null && message.referenced_message?.author?.id === botUserId;
    if (!mentioned && !repliedTo) return null;
  }
  const text = (
    botUserId ? message.content.replaceAll(new RegExp(`<@!?${botUserId}>`, 'g'), ' ') : message.content
  )
    .replace(/[ \t]+/g, ' ')
    .trim();
  const voice = ((message.flags ?? 0) & IS_VOICE_MESSAGE) !== 0;
  const onlyMedia = !text && (message.attachments.length > 0 || (message.sticker_items?.length ?? 0) > 0);
  return {
    channel: 'discord',
    channelMessageId: message.id,
    chatId: message.channel_id,
    senderId: author.id,
    senderName: message.member?.nick ?? author.global_name ?? author.username ?? null,
    kind: voice || onlyMedia ? 'unsupported' : text.startsWith('/') ? 'command' : 'text',
    text,
    meta: inGuild ? { group: true, replyToMessageId: message.id } : {},
  };
}
