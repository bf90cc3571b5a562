import { z } from 'zod';
import { payloadProblem } from '../payload-problem.ts';

/*
 * The parts of Discord Gateway dispatches Steward reads, checked for their types. Unknown fields
 * pass through. Dispatches Steward does not read (GUILD_CREATE, TYPING_START…) are not checked.
 */

const user = z.looseObject({
  id: z.string(),
  username: z.string().optional(),
  global_name: z.string().nullable().optional(),
  bot: z.boolean().optional(),
});

const messageCreate = z.looseObject({
  id: z.string(),
  channel_id: z.string(),
  guild_id: z.string().optional(),
  author: user,
  content: z.string(),
  type: z.number().int(),
  flags: z.number().int().optional(),
  webhook_id: z.string().optional(),
  mentions: z.array(user).default([]),
  attachments: z.array(z.looseObject({ id: z.string() })).default([]),
  sticker_items: z.array(z.looseObject({ id: z.string() })).optional(),
  member: z.looseObject({ nick: z.string().nullable().optional() }).optional(),
  referenced_message: z.looseObject({ author: user.optional() }).nullable().optional(),
});

const ready = z.looseObject({
  session_id: z.string(),
  user: z.looseObject({ id: z.string(), username: z.string().optional() }),
});

export type DiscordMessage = z.infer<typeof messageCreate>;

/**
 * One dispatch, typed: `message` for MESSAGE_CREATE, `ready` for READY (the bot's own id),
 * `ignored` for anything else; or why Steward cannot use it (fields and expected types).
 */
export function parseDiscordDispatch(
  event: string,
  data: unknown,
): { message: DiscordMessage } | { ready: { botUserId: string } } | { ignored: true } | { problem: string } {
  if (event === 'MESSAGE_CREATE') {
    const parsed = messageCreate.safeParse(data);
    return parsed.success ? { message: parsed.data } : { problem: payloadProblem(parsed.error) };
  }
  if (event === 'READY') {
    const parsed = ready.safeParse(data);
    return parsed.success
      ? { ready: { botUserId: parsed.data.user.id } }
      : { problem: payloadProblem(parsed.error) };
  }
  return { ignored: true };
}
