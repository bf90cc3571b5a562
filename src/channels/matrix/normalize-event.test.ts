import { describe, expect, it } from 'vitest';
import { parseRoomEvent } from './matrix-event.ts';
import { normalizeMatrixEvent } from './normalize-event.ts';

const BOT = { userId: '@steward:example.org', displayName: 'Steward' };
const message = (content: Record<string, unknown>, sender = '@alice:example.org') => {
  const parsed = parseRoomEvent({ type: 'm.room.message', event_id: '$e1', sender, content });
  if (!('message' in parsed)) throw new Error(JSON.stringify(parsed));
  return parsed.message;
};

describe('normalizeMatrixEvent', () => {
  it('answers everything in a direct room and only mentions in a group, without the mention', () => {
    expect(normalizeMatrixEvent(message({ msgtype: 'm.text', body: 'hi' }), '!r', BOT, true)).toMatchObject({
      channel: 'matrix',
      chatId: '!r',
      senderId: '@alice:example.org',
      text: 'hi',
      meta: {},
    });
    expect(normalizeMatrixEvent(message({ msgtype: 'm.text', body: 'hi all' }), '!r', BOT, false)).toBeNull();
    expect(
      normalizeMatrixEvent(
        message({ msgtype: 'm.text', body: 'Steward: /help', 'm.mentions': { user_ids: [BOT.userId] } }),
        '!r',
        BOT,
        false,
      ),
    ).toMatchObject({ kind: 'command', text: '/help', meta: { group: true, replyToMessageId: '$e1' } });
  });

  it('strips a reply fallback, follows threads, and ignores its own messages, notices and edits', () => {
    const reply = message({
      msgtype: 'm.text',
      body: '> <@bob:example.org> earlier words\n\nmy answer',
      'm.relates_to': { rel_type: 'm.thread', event_id: '$root', 'm.in_reply_to': { event_id: '$x' } },
    });
    expect(normalizeMatrixEvent(reply, '!r', BOT, true)).toMatchObject({
      text: 'my answer',
      meta: { threadId: '$root' },
    });
    expect(
      normalizeMatrixEvent(message({ msgtype: 'm.text', body: 'x' }, BOT.userId), '!r', BOT, true),
    ).toBeNull();
    expect(normalizeMatrixEvent(message({ msgtype: 'm.notice', body: 'x' }), '!r', BOT, true)).toBeNull();
    expect(
      normalizeMatrixEvent(
        message({
          msgtype: 'm.text',
          body: '* fixed',
          'm.relates_to': { rel_type: 'm.replace', event_id: '$e0' },
        }),
        '!r',
        BOT,
        true,
      ),
    ).toBeNull();
    expect(
      normalizeMatrixEvent(message({ msgtype: 'm.image', body: 'cat.png' }), '!r', BOT, true),
    ).toMatchObject({
      kind: 'unsupported',
    });
  });

  it('tells what cannot be used: the field and the type expected, never the value', () => {
    const parsed = parseRoomEvent({
      type: 'm.room.message',
      event_id: '$e2',
      sender: '@a:b',
      content: { msgtype: 'm.text', body: 42 },
    });
    expect(parsed).toEqual({ problem: expect.stringContaining('content.body') });
    expect(JSON.stringify(parsed)).not.toContain('42');
    expect(parseRoomEvent({ type: 'm.room.encrypted', sender: '@a:b', content: {} })).toHaveProperty(
      'encrypted',
    );
  });
});
