import { z } from 'zod';
import { payloadProblem } from '../payload-problem.ts';

/*
 * The parts of a Matrix `/sync` answer Steward reads, checked for their types. Unknown fields
 * pass through. Each room event is checked on its own, so one unusable event is dropped and the
 * rest of the batch kept.
 */

const events = z.looseObject({ events: z.array(z.unknown()).default([]) });

const syncResponse = z.looseObject({
  next_batch: z.string(),
  rooms: z
    .looseObject({
      join: z
        .record(
          z.string(),
          z.looseObject({
            timeline: z
              .looseObject({
                events: z.array(z.unknown()).default([]),
                limited: z.boolean().optional(),
                prev_batch: z.string().optional(),
              })
              .optional(),
            state: events.optional(),
            summary: z.looseObject({ 'm.joined_member_count': z.number().int().optional() }).optional(),
          }),
        )
        .default({}),
      invite: z.record(z.string(), z.looseObject({ invite_state: events.optional() })).default({}),
    })
    .optional(),
});

export type SyncResponse = z.infer<typeof syncResponse>;

/** Any room event: what is needed to tell its kind. */
const roomEvent = z.looseObject({
  type: z.string(),
  sender: z.string(),
  event_id: z.string().optional(),
  state_key: z.string().optional(),
  content: z.looseObject({}),
});

export type RoomEvent = z.infer<typeof roomEvent>;

const relation = z.looseObject({
  rel_type: z.string().optional(),
  event_id: z.string().optional(),
  'm.in_reply_to': z.looseObject({ event_id: z.string() }).optional(),
});

const messageContent = z.looseObject({
  msgtype: z.string().optional(),
  body: z.string().optional(),
  formatted_body: z.string().optional(),
  'm.relates_to': relation.optional(),
  'm.mentions': z.looseObject({ user_ids: z.array(z.string()).optional() }).optional(),
});

export type MessageEvent = RoomEvent & { event_id: string; content: z.infer<typeof messageContent> };

const memberContent = z.looseObject({ membership: z.string() });

/** The sync answer, typed; or why Steward cannot use it. */
export function parseSync(json: unknown): { sync: SyncResponse } | { problem: string } {
  const parsed = syncResponse.safeParse(json);
  return parsed.success ? { sync: parsed.data } : { problem: payloadProblem(parsed.error) };
}

/**
 * One room event, typed as far as Steward reads it: `message` (m.room.message), `member`,
 * `encrypted` (m.room.encrypted, or the m.room.encryption state that turns encryption on),
 * `other`; or why it cannot be used.
 */
export function parseRoomEvent(
  json: unknown,
):
  | { message: MessageEvent }
  | { member: RoomEvent & { membership: string } }
  | { encrypted: RoomEvent }
  | { other: RoomEvent }
  | { problem: string } {
  const parsed = roomEvent.safeParse(json);
  if (!parsed.success) return { problem: payloadProblem(parsed.error) };
  const event = parsed.data;
  if (event.type === 'm.room.encrypted' || event.type === 'm.room.encryption') return { encrypted: event };
  if (event.type === 'm.room.member') {
    const content = memberContent.safeParse(event.content);
    if (!content.success) return { problem: payloadProblem(content.error, 'content') };
    return { member: { ...event, membership: content.data.membership } };
  }
  if (event.type !== 'm.room.message') return { other: event };
  if (!event.event_id) return { problem: 'event_id: Invalid input: expected string, received undefined' };
  const content = messageContent.safeParse(event.content);
  if (!content.success) return { problem: payloadProblem(content.error, 'content') };
  return { message: { ...event, event_id: event.event_id, content: content.data } };
}
