import { z } from 'zod';
import { payloadProblem } from '../payload-problem.ts';

/*
 * The parts of a Telegram Update Steward reads, checked for their types: unknown fields pass
 * through untouched (Telegram adds fields often), but a field Steward uses with the wrong type
 * makes the update unusable, to be acknowledged and dropped rather than thrown on.
 */

const user = z.looseObject({
  id: z.number(),
  is_bot: z.boolean(),
  first_name: z.string(),
  last_name: z.string().optional(),
  username: z.string().optional(),
});

const entity = z.looseObject({
  type: z.string(),
  offset: z.number().int().nonnegative(),
  length: z.number().int().nonnegative(),
  user: user.optional(),
});

const audio = z.looseObject({
  file_id: z.string(),
  duration: z.number(),
  mime_type: z.string().optional(),
  file_size: z.number().optional(),
});

const message = z.looseObject({
  message_id: z.number().int(),
  from: user.optional(),
  chat: z.looseObject({ id: z.number(), type: z.string() }),
  text: z.string().optional(),
  caption: z.string().optional(),
  entities: z.array(entity).optional(),
  caption_entities: z.array(entity).optional(),
  reply_to_message: z.looseObject({ from: z.looseObject({ id: z.number() }).optional() }).optional(),
  voice: audio.optional(),
  audio: audio.optional(),
  is_topic_message: z.boolean().optional(),
  message_thread_id: z.number().int().optional(),
});

const update = z.looseObject({ update_id: z.number().int(), message: message.optional() });

export type TelegramMessage = z.infer<typeof message>;
export type TelegramUpdate = z.infer<typeof update>;

/** The update, typed, or why Steward cannot use it (fields and expected types, no values). */
export function parseTelegramUpdate(json: unknown): { update: TelegramUpdate } | { problem: string } {
  const parsed = update.safeParse(json);
  return parsed.success ? { update: parsed.data } : { problem: payloadProblem(parsed.error) };
}
