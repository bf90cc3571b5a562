import { z } from 'zod';
import { payloadProblem } from '../payload-problem.ts';

/*
 * The parts of a Slack Events API request Steward reads, checked for their types. Unknown
 * fields pass through. Events Steward never answers (user_change, reactions…) are not checked
 * beyond their type: their fields are none of Steward's business.
 */

const envelope = z.looseObject({
  type: z.string(),
  challenge: z.string().optional(),
  event_id: z.string().optional(),
  event: z.looseObject({ type: z.string() }).optional(),
  authorizations: z.array(z.looseObject({ user_id: z.string().optional() })).optional(),
});

/** The events Steward answers: messages (DMs) and mentions. */
const ANSWERED = new Set(['message', 'app_mention']);

const messageEvent = z.looseObject({
  type: z.string(),
  subtype: z.string().optional(),
  user: z.string().optional(),
  bot_id: z.string().optional(),
  text: z.string().optional(),
  ts: z.string(),
  thread_ts: z.string().optional(),
  channel: z.string(),
  channel_type: z.string().optional(),
});

export type SlackMessageEvent = z.infer<typeof messageEvent>;
export type SlackEnvelope = z.infer<typeof envelope>;

/**
 * The request, typed: `challenge` for url_verification, `event` for a message or mention,
 * `ignored` for anything else; or why Steward cannot use it (fields and expected types).
 */
export function parseSlackRequest(
  json: unknown,
):
  | { challenge: string }
  | { envelope: SlackEnvelope; event: SlackMessageEvent }
  | { ignored: true }
  | { problem: string } {
  const parsed = envelope.safeParse(json ?? {});
  if (!parsed.success) return { problem: payloadProblem(parsed.error) };
  const request = parsed.data;
  if (request.type === 'url_verification') {
    return request.challenge !== undefined
      ? { challenge: request.challenge }
      : { problem: 'challenge: Invalid input: expected string, received undefined' };
  }
  if (request.type !== 'event_callback' || !request.event || !ANSWERED.has(request.event.type)) {
    return { ignored: true };
  }
  const answered = z.looseObject({ event: messageEvent }).safeParse(request);
  if (!answered.success) return { problem: payloadProblem(answered.error) };
  return { envelope: request, event: answered.data.event };
}
