import { describe, expect, it } from 'vitest';
import { fixture, withField } from '../../../test/support/channel-fixtures.ts';
import { parseChatEvent } from './chat-event.ts';

describe('Google Chat events', () => {
  it('takes every recorded MESSAGE event, and ignores other event types without checking them', () => {
    for (const name of ['message-dm', 'message-room']) {
      expect(parseChatEvent(fixture('googlechat', name)), name).toHaveProperty('event');
    }
    expect(parseChatEvent(fixture('googlechat', 'added-to-space'))).toEqual({ ignored: true });
  });

  it('names the wrong-typed field, never the value sent', () => {
    const cases: Array<[object, string]> = [
      [withField(fixture('googlechat', 'message-dm'), 'message.text', 4242), 'message.text'],
      [
        withField(fixture('googlechat', 'message-dm'), 'message.argumentText', ['secret']),
        'message.argumentText',
      ],
      [withField(fixture('googlechat', 'message-room'), 'message.sender', 'users/secret'), 'message.sender'],
      [withField(fixture('googlechat', 'message-room'), 'message.space.name', 4242), 'message.space.name'],
      [withField(fixture('googlechat', 'message-dm'), 'message', 'secret'), 'message'],
      [withField(fixture('googlechat', 'message-dm'), 'type', 4242), 'type'],
    ];
    for (const [payload, field] of cases) {
      const parsed = parseChatEvent(payload);
      expect(parsed, field).toHaveProperty('problem');
      const problem = (parsed as { problem: string }).problem;
      expect(problem).toContain(`${field}:`);
      expect(problem).not.toMatch(/4242|secret/);
    }
  });
});
