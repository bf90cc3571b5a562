import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { z } from 'zod';
import {
  receiptsJson,
  type TurnEngine,
  type TurnEvent,
  type TurnOutcome,
  turnTrace,
} from '../agents/index.ts';
import type { Database } from '../db/index.ts';
import { StewardError } from '../errors.ts';
import { type InboundRateLimiter, RateLimitedError } from '../security/index.ts';
import { userIdProblem } from '../users/index.ts';
import { type AuthEnv, actingUser, mayRead } from './auth.ts';
import { badRequest, textProblem } from './input.ts';

const chatBody = z
  .object({
    user: z.string().optional(),
    text: z.string().min(1, 'text is required'),
    conversation: z.string().optional(),
    new: z.boolean().optional(),
    mode: z.enum(['multi_agent', 'single_loop', 'direct']).optional(),
    channel: z
      .string()
      .regex(/^[a-z][a-z0-9_]*$/)
      .default('api'),
    /** `data`: receipts only in `receipts`, never as lines in `reply` (default: per replies.receipts). */
    receipts: z.enum(['lines', 'data']).optional(),
  })
  .strict();

/**
 * `POST /api/chat {text, user?, conversation?}` → `{reply, conversationId, turnId, status, usage,
 * receipts}` (`receipts`: `[{skill, status, summary, execution_id}]`, whether or not `reply` shows them);
 * with `Accept: text/event-stream` the turn's events stream as they happen (closing the stream
 * cancels the turn). `GET /api/turns/:id` → the turn's trace, for its own user or the owner.
 */
export function chatRoutes(deps: {
  engine: TurnEngine;
  database: Database;
  /** Per-user inbound limit, checked before the message is stored. */
  rateLimit?: InboundRateLimiter;
}): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  app.post('/chat', async (c) => {
    const parsed = chatBody.safeParse(await c.req.json().catch(() => null));
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return badRequest(
        c,
        `${issue?.path.join('.') || 'body'}: ${issue?.message}. Send JSON {"text": "...", "user": "local", "conversation": "<id>"}.`,
      );
    }
    const acting = actingUser(c, parsed.data.user);
    if ('response' in acting) return acting.response;
    const problem =
      userIdProblem(acting.userId) ??
      textProblem('text', parsed.data.text) ??
      (parsed.data.conversation ? textProblem('conversation', parsed.data.conversation) : null);
    if (problem) return badRequest(c, problem);
    try {
      await deps.rateLimit?.check({ userId: acting.userId });
    } catch (error) {
      if (!(error instanceof RateLimitedError)) throw error;
      c.header('Retry-After', String(error.retryAfterSeconds));
      return c.json({ error: 'rate_limited', message: error.message }, 429);
    }
    const input = {
      userId: acting.userId,
      text: parsed.data.text,
      channel: parsed.data.channel,
      conversationId: parsed.data.conversation,
      newConversation: parsed.data.new,
      mode: parsed.data.mode,
      receipts: parsed.data.receipts,
    };
    if ((c.req.header('accept') ?? '').includes('text/event-stream')) {
      return streamSSE(c, async (stream) => {
        const queue: TurnEvent[] = [];
        let wake: (() => void) | null = null;
        let finished = false;
        const turn = deps.engine
          .handle({
            ...input,
            signal: c.req.raw.signal,
            emit: (event) => {
              queue.push(event);
              wake?.();
            },
          })
          .finally(() => {
            finished = true;
            wake?.();
          });
        while (!finished || queue.length) {
          const event = queue.shift();
          if (event) {
            await stream.writeSSE({ event: event.type, data: JSON.stringify(event) });
            continue;
          }
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
          wake = null;
        }
        try {
          const outcome = await turn;
          await stream.writeSSE({ event: 'done', data: JSON.stringify(publicOutcome(outcome)) });
        } catch (error) {
          const refused = refusal(error);
          await stream.writeSSE({
            event: 'error',
            data: JSON.stringify(
              refused ? refused.body : { error: 'internal', message: 'The turn failed; see the server log.' },
            ),
          });
        }
      });
    }
    try {
      return c.json(publicOutcome(await deps.engine.handle(input)));
    } catch (error) {
      const refused = refusal(error);
      if (refused) return c.json(refused.body, refused.status);
      throw error;
    }
  });

  app.get('/turns/:id', async (c) => {
    const trace = await turnTrace(deps.database, c.req.param('id'));
    // Someone else's turn is as absent as a missing one.
    if (!trace || !mayRead(c, trace.turn.user_id)) {
      return c.json({ error: 'not_found', message: `No turn ${c.req.param('id')}.` }, 404);
    }
    return c.json(trace);
  });
  return app;
}

/** What the engine refused (bad input, unknown conversation, shutting down), as an HTTP answer. */
function refusal(
  error: unknown,
): { status: 400 | 404 | 503; body: { error: string; message: string } } | null {
  if (!(error instanceof StewardError)) return null;
  if (error.code === 'conversation_not_found')
    return { status: 404, body: { error: 'not_found', message: error.message } };
  if (error.code === 'invalid_message')
    return { status: 400, body: { error: 'bad_request', message: error.message } };
  if (error.code === 'shutting_down')
    return { status: 503, body: { error: 'unavailable', message: error.message } };
  return null;
}

function publicOutcome(outcome: TurnOutcome) {
  return {
    reply: outcome.reply,
    conversationId: outcome.conversationId,
    turnId: outcome.turnId,
    status: outcome.status,
    usage: outcome.usage,
    receipts: receiptsJson(outcome.receipts),
    ...(outcome.duplicate ? { duplicate: true } : {}),
  };
}
