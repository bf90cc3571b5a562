import { describe, expect, it } from 'vitest';
import { parseDiscordDispatch } from './discord-event.ts';
import { normalizeDiscordMessage } from './normalize-message.ts';

const BOT = '1180000000000000001';
const base = {
  id: '5000',
  channel_id: '3300',
  author: { id: '2200', username: 'alice', global_name: 'Alice' },
  content: 'hello',
  type: 0,
  mentions: [],
  attachments: [],
  tts: false,
  pinned: false,
};
const parse = (data: object) => {
  const parsed = parseDiscordDispatch('MESSAGE_CREATE', data);
  if (!('message' in parsed)) throw new Error(JSON.stringify(parsed));
  return parsed.message;
};

describe('normalizeDiscordMessage', () => {
  it('takes a DM whole and a guild message only when it mentions or replies to the bot', () => {
    expect(normalizeDiscordMessage(parse(base), BOT)).toMatchObject({
      channel: 'discord',
      channelMessageId: '5000',
      chatId: '3300',
      senderId: '2200',
      senderName: 'Alice',
      kind: 'text',
      meta: {},
    });
    const guild = { ...base, guild_id: '4400', member: { nick: 'Al' } };
    expect(normalizeDiscordMessage(parse(guild), BOT)).toBeNull();
    expect(
      normalizeDiscordMessage(
        parse({ ...guild, content: `<@${BOT}> /help`, mentions: [{ id: BOT, bot: true }] }),
        BOT,
      ),
    ).toMatchObject({
      kind: 'command',
      text: '/help',
      senderName: 'Al',
      meta: { group: true, replyToMessageId: '5000' },
    });
    expect(
      normalizeDiscordMessage(
        parse({ ...guild, type: 19, referenced_message: { author: { id: BOT } } }),
        BOT,
      ),
    ).toMatchObject({ text: 'hello' });
  });

  it('ignores bots (itself included), webhooks and system messages; a lone attachment is unsupported', () => {
    expect(normalizeDiscordMessage(parse({ ...base, author: { id: BOT, bot: true } }), BOT)).toBeNull();
    expect(normalizeDiscordMessage(parse({ ...base, webhook_id: '77' }), BOT)).toBeNull();
    expect(normalizeDiscordMessage(parse({ ...base, type: 7 }), BOT)).toBeNull();
    expect(
      normalizeDiscordMessage(
        parse({ ...base, content: '', attachments: [{ id: '1', filename: 'a.png' }] }),
        BOT,
      ),
    ).toMatchObject({ kind: 'unsupported' });
  });

  it('tells what cannot be used without repeating the value', () => {
    const parsed = parseDiscordDispatch('MESSAGE_CREATE', { ...base, content: 42 });
    expect(parsed).toEqual({ problem: expect.stringContaining('content') });
    expect(parseDiscordDispatch('TYPING_START', { anything: true })).toEqual({ ignored: true });
  });
});
