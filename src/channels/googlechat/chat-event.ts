import { z } from 'zod';
import { payloadProblem } from '../payload-problem.ts';

/*
 * The parts of a Google Chat interaction event Steward reads, checked for their types. Unknown
 * fields pass through; events other than MESSAGE (ADDED_TO_SPACE, CARD_CLICKED…) are not
 * checked beyond their type, as Steward does not answer them.
 */

const space = z.looseObject({
  name: z.string(),
  type: z.string().optional(),
  spaceType: z.string().optional(),
  singleUserBotDm: z.boolean().optional(),
});

const messageEvent = z.looseObject({
  type: z.literal('MESSAGE'),
  message: z.looseObject({
    name: z.string(),
    text: z.string().optional(),
    argumentText: z.string().optional(),
    sender: z.looseObject({
      name: z.string(),
      displayName: z.string().optional(),
      type: z.string().optional(),
    }),
    thread: z.looseObject({ name: z.string().optional() }).optional(),
    space: space.optional(),
  }),
  space: space.optional(),
});

export type ChatMessageEvent = z.infer<typeof messageEvent>;

/** A MESSAGE event, typed; `ignored` for other events; or why Steward cannot use it. */
export function parseChatEvent(
  json: unknown,
): { event: ChatMessageEvent } | { ignored: true } | { problem: string } {
  const kind = z.looseObject({ type: z.string() }).safeParse(json ?? {});
  if (!kind.success) return { problem: payloadProblem(kind.error) };
  if (kind.data.type !== 'MESSAGE') return { ignored: true };
  const parsed = messageEvent.safeParse(json);
  return parsed.success ? { event: parsed.data } : { problem: payloadProblem(parsed.error) };
}
