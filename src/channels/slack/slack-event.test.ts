import { describe, expect, it } from 'vitest';
import { fixture, withField } from '../../../test/support/channel-fixtures.ts';
import { parseSlackRequest } from './slack-event.ts';

describe('Slack event requests', () => {
  it('takes every recorded request, and ignores events Steward never answers without checking them', () => {
    expect(parseSlackRequest(fixture('slack', 'url-verification'))).toEqual({
      challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
    });
    for (const name of ['app-mention', 'message-im', 'bot-message']) {
      expect(parseSlackRequest(fixture('slack', name)), name).toHaveProperty('event');
    }
    // user_change carries `user` as an object: none of Steward's business.
    expect(parseSlackRequest(fixture('slack', 'user-change'))).toEqual({ ignored: true });
  });

  it('names the wrong-typed field of a message or mention, never the value sent', () => {
    const cases: Array<[object, string]> = [
      [withField(fixture('slack', 'app-mention'), 'event.text', 4242), 'event.text'],
      [withField(fixture('slack', 'message-im'), 'event.user', { id: 'U-secret' }), 'event.user'],
      [withField(fixture('slack', 'message-im'), 'event.channel', null), 'event.channel'],
      [withField(fixture('slack', 'app-mention'), 'authorizations', 'U-secret'), 'authorizations'],
      [withField(fixture('slack', 'app-mention'), 'type', 7), 'type'],
    ];
    for (const [payload, field] of cases) {
      const parsed = parseSlackRequest(payload);
      expect(parsed, field).toHaveProperty('problem');
      const problem = (parsed as { problem: string }).problem;
      expect(problem).toContain(`${field}:`);
      expect(problem).not.toMatch(/4242|U-secret/);
    }
  });
});
