import type { InboundMessage } from '../types.ts';
import type { MessageEvent } from './matrix-event.ts';

/** Who the bot is, to see it mentioned and to take the mention out of the text. */
export type MatrixBot = { userId: string; displayName: string | null };

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A reply's body starts with the quoted message (`> <@user:server> …`) and a blank line. */
function withoutReplyFallback(body: string): string {
  const lines = body.split('\n');
  let index = 0;
  while (index < lines.length && lines[index]!.startsWith('>')) index++;
  if (index === 0) return body;
  return lines
    .slice(index)
    .join('\n')
    .replace(/^\s*\n/, '');
}

function mentions(event: MessageEvent, bot: MatrixBot): boolean {
  const { content } = event;
  if (content['m.mentions']?.user_ids?.includes(bot.userId)) return true;
  if (content.body?.includes(bot.userId)) return true;
  return content.formatted_body?.includes(`matrix.to/#/${bot.userId}`) ?? false;
}

/**
 * An m.room.message as an InboundMessage, or null for what Steward does not answer: its own
 * messages, notices (other bots), edits, and in rooms with more than two members anything that
 * does not mention the bot. The mention (the bot's id or display name) is taken out of the text.
 */
export function normalizeMatrixEvent(
  event: MessageEvent,
  roomId: string,
  bot: MatrixBot,
  direct: boolean,
): InboundMessage | null {
  const { content } = event;
  const relation = content['m.relates_to'];
  if (event.sender === bot.userId || content.msgtype === undefined) return null;
  if (content.msgtype === 'm.notice' || relation?.rel_type === 'm.replace') return null;
  if (!direct && !mentions(event, bot)) return null;
  const readable = content.msgtype === 'm.text' || content.msgtype === 'm.emote';
  const names = [
    bot.userId,
    ...(bot.displayName ? [bot.displayName] : []),
    bot.userId.slice(1).split(':')[0]!,
  ];
  const mention = new RegExp(`^\\s*(?:${names.map(escapeRegExp).join('|')})[:,]?\\s*`, 'i');
  const text = readable
    ? withoutReplyFallback(content.body ?? '')
        .replace(mention, '')
        .replaceAll(bot.userId, '')
        .trim()
    : '';
  const threadId = relation?.rel_type === 'm.thread' ? relation.event_id : undefined;
  return {
    channel: 'matrix',
    channelMessageId: event.event_id,
    chatId: roomId,
    senderId: event.sender,
    kind: !readable ? 'unsupported' : text.startsWith('/') ? 'command' : 'text',
    text,
    meta: {
      ...(direct ? {} : { group: true, replyToMessageId: event.event_id }),
      ...(threadId ? { threadId } : {}),
    },
  };
}
