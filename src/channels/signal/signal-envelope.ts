import { z } from 'zod';
import type { InboundMessage } from '../types.ts';

const attachmentSchema = z.looseObject({
  id: z.string().min(1),
  contentType: z.string().nullish(),
  size: z.number().nullish(),
});

/** One item of `GET /v1/receive/{number}` (or one WebSocket frame in json-rpc mode): only what Steward reads. */
const receivedSchema = z.looseObject({
  envelope: z.looseObject({
    source: z.string().nullish(),
    sourceNumber: z.string().nullish(),
    sourceUuid: z.string().nullish(),
    sourceName: z.string().nullish(),
    timestamp: z.number().int(),
    dataMessage: z
      .looseObject({
        timestamp: z.number().int().nullish(),
        message: z.string().nullish(),
        groupInfo: z.looseObject({ groupId: z.string().nullish() }).nullish(),
        attachments: z.array(attachmentSchema).nullish(),
        sticker: z.unknown().optional(),
      })
      .nullish(),
  }),
  account: z.string().nullish(),
});

export type SignalReceived =
  | { message: InboundMessage }
  /** Nothing to answer: a receipt, typing, a sync from the bot's own devices, a group message. */
  | { ignored: string }
  /** A frame that is not an envelope Steward understands (logged, never stored). */
  | { problem: string };

/**
 * A received Signal envelope as an InboundMessage. The sender is their number (`+4915…`), or
 * their account id when they hide their number. The message id is the sender and the sender's
 * timestamp — the pair Signal itself identifies a message by — so a redelivery is dropped.
 * Direct messages only: group messages are ignored. An audio attachment is a voice note.
 */
export function normalizeSignalEnvelope(raw: unknown): SignalReceived {
  const parsed = receivedSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { problem: `envelope.${issue.path.join('.')}: ${issue.message}` };
  }
  const { envelope } = parsed.data;
  const data = envelope.dataMessage;
  if (!data) return { ignored: 'no dataMessage (a receipt, typing, or a sync from another device)' };
  if (data.groupInfo) return { ignored: 'a group message (Steward answers direct messages on Signal)' };
  const sender =
    envelope.sourceNumber ??
    (envelope.source?.startsWith('+') ? envelope.source : null) ??
    envelope.sourceUuid;
  if (!sender) return { problem: 'envelope: no sourceNumber, source or sourceUuid' };
  const text = (data.message ?? '').trim();
  const audio = (data.attachments ?? []).find((attachment) =>
    attachment.contentType?.toLowerCase().startsWith('audio/'),
  );
  const otherMedia = (data.attachments?.length ?? 0) > 0 || data.sticker !== undefined;
  return {
    message: {
      channel: 'signal',
      channelMessageId: `${sender}:${data.timestamp ?? envelope.timestamp}`,
      chatId: sender,
      senderId: sender,
      senderName: envelope.sourceName || null,
      kind: audio ? 'voice' : !text && otherMedia ? 'unsupported' : text.startsWith('/') ? 'command' : 'text',
      text,
      meta: {},
      media: audio ? { id: audio.id, mimeType: audio.contentType ?? null, bytes: audio.size ?? null } : null,
    },
  };
}
