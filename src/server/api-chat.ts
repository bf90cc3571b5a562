import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { z } from 'zod';
import {
  type ConverseDeps,
  converse,
  type Exchange,
  receiptsJson,
  type TurnOutcome,
  turnOutcome,
  turnTrace,
} from '../agents/index.ts';
import type { Database } from '../db/index.ts';
import { RefusedError } from '../errors.ts';
import { userIdProblem } from '../users/index.ts';
import { type AuthEnv, actingUser, mayRead } from './auth.ts';
import { badRequest, refusalResponse, textProblem } from './input.ts';

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
export function chatRoutes(deps: ConverseDeps & { database: Database }): Hono<AuthEnv> {
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
    const streaming = (c.req.header('accept') ?? '').includes('text/event-stream');
    let exchange: Exchange;
    try {
      exchange = await converse(deps, {
        userId: acting.userId,
        surface: parsed.data.channel,
        text: parsed.data.text,
        options: {
          conversationId: parsed.data.conversation,
          newConversation: parsed.data.new,
          mode: parsed.data.mode,
          receipts: parsed.data.receipts,
          ...(streaming ? { signal: c.req.raw.signal, stream: () => true } : {}),
        },
      });
    } catch (error) {
      return refusalResponse(c, error);
    }
    if (streaming) {
      return streamSSE(c, async (stream) => {
        for await (const event of exchange.events) {
          await stream.writeSSE({ event: event.type, data: JSON.stringify(event) });
        }
        try {
          const outcome = await turnOutcome(exchange);
          await stream.writeSSE({ event: 'done', data: JSON.stringify(publicOutcome(outcome)) });
        } catch (error) {
          await stream.writeSSE({
            event: 'error',
            data: JSON.stringify(
              error instanceof RefusedError
                ? { error: error.label, message: error.message }
                : { error: 'internal', message: 'The turn failed; see the server log.' },
            ),
          });
        }
      });
    }
    try {
      return c.json(publicOutcome(await turnOutcome(exchange)));
    } catch (error) {
      return refusalResponse(c, error);
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
