import { describe, expect, it } from 'vitest';
import { fixture, withField } from '../../../test/support/channel-fixtures.ts';
import { parseWhatsAppPayload } from './whatsapp-payload.ts';

const VALUE = 'entry.0.changes.0.value';

describe('WhatsApp webhooks', () => {
  it('takes every recorded payload: messages of each type, and nothing from status callbacks', () => {
    for (const [name, type] of [
      ['text-message', 'text'],
      ['voice-message', 'audio'],
      ['image-message', 'image'],
    ] as const) {
      const parsed = parseWhatsAppPayload(fixture('whatsapp', name));
      expect(parsed.problems, name).toEqual([]);
      expect(
        parsed.messages.map(({ message }) => message.type),
        name,
      ).toEqual([type]);
      expect(parsed.messages[0]!.contacts[0]?.profile?.name).toBe('Sheena Nelson');
    }
    expect(parseWhatsAppPayload(fixture('whatsapp', 'status-delivered'))).toEqual({
      messages: [],
      problems: [],
    });
  });

  it('names each part it cannot use, never the value sent, and keeps the rest of the batch', () => {
    const cases: Array<[object, string]> = [
      [withField(fixture('whatsapp', 'text-message'), `${VALUE}.messages`, 5), `${VALUE}.messages`],
      [
        withField(fixture('whatsapp', 'text-message'), `${VALUE}.messages.0.text.body`, 4242),
        `${VALUE}.messages.0.text.body`,
      ],
      [withField(fixture('whatsapp', 'text-message'), 'entry', { secret: 'x' }), 'entry'],
      [
        withField(fixture('whatsapp', 'voice-message'), `${VALUE}.messages.0.audio.id`, 4242),
        `${VALUE}.messages.0.audio.id`,
      ],
    ];
    for (const [payload, field] of cases) {
      const parsed = parseWhatsAppPayload(payload);
      expect(parsed.messages, field).toEqual([]);
      expect(parsed.problems.join(' '), field).toContain(`${field}:`);
      expect(parsed.problems.join(' ')).not.toMatch(/4242|secret/);
    }
    const batch = fixture<{ entry: Array<{ changes: Array<{ value: { messages: unknown[] } }> }> }>(
      'whatsapp',
      'text-message',
    );
    const messages = batch.entry[0]!.changes[0]!.value.messages;
    messages.push({ ...(messages[0] as object), id: 'wamid.second', from: 16505551234 });
    const parsed = parseWhatsAppPayload(batch);
    expect(parsed.messages).toHaveLength(1);
    expect(parsed.problems).toEqual([
      `${VALUE}.messages.1.from: Invalid input: expected string, received number`,
    ]);
  });
});
