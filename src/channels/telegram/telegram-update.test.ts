import { describe, expect, it } from 'vitest';
import { fixture, withField } from '../../../test/support/channel-fixtures.ts';
import { normalizeTelegramUpdate } from './normalize-update.ts';
import { parseTelegramUpdate } from './telegram-update.ts';

const BOT = { id: 7000001, username: 'steward_test_bot' };

/** Normalizes a recorded update through the schema, as the webhook and the poller do. */
function normalized(name: string) {
  const parsed = parseTelegramUpdate(fixture('telegram', name));
  if ('problem' in parsed) throw new Error(parsed.problem);
  return normalizeTelegramUpdate(parsed.update, BOT);
}

describe('Telegram updates', () => {
  it('takes every recorded update, keeping the fields Steward does not read', () => {
    expect(normalized('private-text')).toMatchObject({
      kind: 'text',
      chatId: '1111',
      senderName: 'Ada Lovelace',
    });
    expect(normalized('command-start')).toMatchObject({ kind: 'command', text: '/start' });
    expect(normalized('voice-note')).toMatchObject({
      kind: 'voice',
      media: { id: 'AwACAgIAAxkBAAIBXWd0voice' },
    });
    expect(normalized('sticker')).toMatchObject({ kind: 'unsupported' });
    expect(normalized('group-mention')).toMatchObject({ kind: 'text', text: 'what is on my list today?' });
    expect(normalized('group-reply')).toMatchObject({ kind: 'text', meta: { group: true } });
    expect(normalized('group-chatter')).toBeNull();
    expect(normalized('photo-caption')).toMatchObject({ kind: 'text', text: 'what plant is this?' });
    expect(normalized('edited-message')).toBeNull();
  });

  it('names the wrong-typed field and the type it needs, never the value sent', () => {
    const cases: Array<[object, string]> = [
      [withField(fixture('telegram', 'group-mention'), 'message.entities', 5), 'message.entities'],
      [withField(fixture('telegram', 'private-text'), 'message.text', 4242), 'message.text'],
      [withField(fixture('telegram', 'private-text'), 'message.from.id', 'secret-sender'), 'message.from.id'],
      [withField(fixture('telegram', 'voice-note'), 'message.voice', 'AwACAgIA'), 'message.voice'],
      [
        withField(fixture('telegram', 'group-mention'), 'message.entities.0.offset', -1),
        'message.entities.0.offset',
      ],
      [{ hello: 'world' }, 'update_id'],
    ];
    for (const [payload, field] of cases) {
      const parsed = parseTelegramUpdate(payload);
      expect(parsed, field).toHaveProperty('problem');
      const problem = (parsed as { problem: string }).problem;
      expect(problem).toContain(`${field}:`);
      for (const value of ['4242', 'secret-sender', 'AwACAgIA', 'world'])
        expect(problem).not.toContain(value);
    }
  });
});
