import { expect, it } from 'vitest';
import { normalizeSignalEnvelope } from './signal-envelope.ts';

const envelope = (fields: Record<string, unknown>, data: Record<string, unknown> | null) => ({
  envelope: {
    source: '+15550100001',
    sourceNumber: '+15550100001',
    sourceUuid: '7ccae375-cd51-4c82-8b1e-7be3280aa485',
    sourceName: 'Ana',
    sourceDevice: 1,
    timestamp: 1745372297238,
    ...(data
      ? { dataMessage: { timestamp: 1745372297238, expiresInSeconds: 0, viewOnce: false, ...data } }
      : {}),
    ...fields,
  },
  account: '+15550100000',
});

it('reads a direct message: the number is the sender and the chat, sender+timestamp the id', () => {
  expect(normalizeSignalEnvelope(envelope({}, { message: ' hi there ' }))).toEqual({
    message: {
      channel: 'signal',
      channelMessageId: '+15550100001:1745372297238',
      chatId: '+15550100001',
      senderId: '+15550100001',
      senderName: 'Ana',
      kind: 'text',
      text: 'hi there',
      meta: {},
      media: null,
    },
  });
});

it('takes the account id when the number is hidden; an audio attachment is a voice note', () => {
  const received = normalizeSignalEnvelope(
    envelope(
      { source: null, sourceNumber: null },
      {
        message: null,
        attachments: [{ contentType: 'audio/aac', id: 'x1.aac', size: 2048, filename: null }],
      },
    ),
  );
  expect(received).toMatchObject({
    message: {
      senderId: '7ccae375-cd51-4c82-8b1e-7be3280aa485',
      kind: 'voice',
      media: { id: 'x1.aac', mimeType: 'audio/aac', bytes: 2048 },
    },
  });
});

it('ignores receipts, typing and group messages; names what is wrong in a malformed frame', () => {
  expect(normalizeSignalEnvelope(envelope({ typingMessage: { action: 'STARTED' } }, null))).toHaveProperty(
    'ignored',
  );
  expect(
    normalizeSignalEnvelope(envelope({}, { message: 'hi', groupInfo: { groupId: 'abc=', type: 'DELIVER' } })),
  ).toHaveProperty('ignored');
  expect(normalizeSignalEnvelope({ envelope: { source: '+1', timestamp: 'now' } })).toEqual({
    problem: expect.stringContaining('envelope.timestamp'),
  });
  expect(
    normalizeSignalEnvelope(
      envelope({}, { message: null, attachments: [{ contentType: 'image/jpeg', id: 'p.jpg' }] }),
    ),
  ).toMatchObject({ message: { kind: 'unsupported' } });
});
