import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { z } from 'zod';
import type { TurnEvent } from '../agents/events.ts';
import type { TurnEngine } from '../agents/turn-engine.ts';
import type { Database } from '../db/index.ts';
import { StewardError } from '../errors.ts';
import { userIdProblem } from '../users/index.ts';

const chatBody = z
  .object({
    user: z.string().default('local'),
    text: z.string().min(1, 'text is required'),
    conversation: z.string().optional(),
    new: z.boolean().optional(),
    mode: z.enum(['multi_agent', 'single_loop', 'direct']).optional(),
    channel: z
      .string()
      .regex(/^[a-z][a-z0-9_]*$/)
      .default('api'),
  })
  .strict();

/**
 * `POST /api/chat {user, text, conversation?}` → `{reply, conversationId, turnId, usage}`;
 * with `Accept: text/event-stream` the turn's events stream as they happen.
 * `GET /api/turns/:id` → the turn's trace.
 */
export function chatRoutes(deps: { engine: TurnEngine; database: Database }): Hono {
  const app = new Hono();
  app.post('/chat', async (c) => {
    const parsed = chatBody.safeParse(await c.req.json().catch(() => null));
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return c.json(
        {
          error: 'bad_request',
          message: `${issue?.path.join('.') || 'body'}: ${issue?.message}. Send JSON {"text": "...", "user": "local", "conversation": "<id>"}.`,
        },
        400,
      );
    }
    const problem = userIdProblem(parsed.data.user);
    if (problem) return c.json({ error: 'bad_request', message: problem }, 400);
    const input = {
      userId: parsed.data.user,
      text: parsed.data.text,
      channel: parsed.data.channel,
      conversationId: parsed.data.conversation,
      newConversation: parsed.data.new,
      mode: parsed.data.mode,
    };
    if ((c.req.header('accept') ?? '').includes('text/event-stream')) {
      return streamSSE(c, async (stream) => {
        const queue: TurnEvent[] = [];
        let wake: (() => void) | null = null;
        let finished = false;
        const turn = deps.engine
          .handle({
            ...input,
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
          await stream.writeSSE({
            event: 'error',
            data: JSON.stringify({ message: (error as Error).message }),
          });
        }
      });
    }
    try {
      return c.json(publicOutcome(await deps.engine.handle(input)));
    } catch (error) {
      if (error instanceof StewardError && error.code === 'conversation_not_found') {
        return c.json({ error: 'not_found', message: error.message }, 404);
      }
      throw error;
    }
  });

  app.get('/turns/:id', async (c) => {
    const trace = await turnTrace(deps.database, c.req.param('id'));
    if (!trace) return c.json({ error: 'not_found', message: `No turn ${c.req.param('id')}.` }, 404);
    return c.json(trace);
  });
  return app;
}

function publicOutcome(outcome: Awaited<ReturnType<TurnEngine['handle']>>) {
  return {
    reply: outcome.reply,
    conversationId: outcome.conversationId,
    turnId: outcome.turnId,
    status: outcome.status,
    usage: outcome.usage,
    ...(outcome.duplicate ? { duplicate: true } : {}),
  };
}

type ExecutionRow = {
  id: string;
  parent_id: string | null;
  kind: 'agent' | 'skill';
  agent_id: string | null;
  mission: string | null;
  skill: string | null;
  command: string | null;
  depends_on: string[] | null;
  status: string;
  result: string | null;
  error: string | null;
  usage: unknown;
  started_at: Date;
  finished_at: Date | null;
  duration_ms: number | null;
};

/** Everything that happened in a turn: orchestrator calls, agents with dependencies, skill calls, usage. */
export async function turnTrace(database: Database, turnId: string) {
  const turns = await database.query('SELECT * FROM turns WHERE id = $1', [turnId]);
  const turn = turns[0];
  if (!turn) return null;
  const calls = await database.query(
    `SELECT role, model, prompt_tokens, cached_tokens, cache_write_tokens, completion_tokens, cost, latency_ms, error_class, error, execution_id, created_at
     FROM llm_calls WHERE turn_id = $1 ORDER BY id`,
    [turnId],
  );
  const executions = await database.query<ExecutionRow>(
    `SELECT id, parent_id, kind, agent_id, mission, skill, command, depends_on, status, result, error, usage, started_at, finished_at, duration_ms
     FROM skill_executions WHERE turn_id = $1 ORDER BY started_at`,
    [turnId],
  );
  const skillCall = (row: ExecutionRow) => ({
    id: row.id,
    skill: row.skill,
    command: row.command,
    status: row.status,
    result: row.result,
    error: row.error,
    startedAt: row.started_at,
    durationMs: row.duration_ms,
  });
  const agents = executions
    .filter((row) => row.kind === 'agent')
    .map((row) => ({
      id: row.id,
      agentId: row.agent_id,
      mission: row.mission,
      dependsOn: row.depends_on ?? [],
      status: row.status,
      result: row.result,
      error: row.error,
      usage: row.usage,
      startedAt: row.started_at,
      finishedAt: row.finished_at,
      durationMs: row.duration_ms,
      skillCalls: executions.filter((child) => child.parent_id === row.id).map(skillCall),
    }));
  return {
    turn,
    orchestratorCalls: calls.filter((call) => call.role === 'orchestrator'),
    llmCalls: calls,
    agents,
    directSkillCalls: executions
      .filter((row) => row.kind === 'skill' && row.parent_id === null)
      .map(skillCall),
    usage: {
      promptTokens: turn.prompt_tokens,
      cachedTokens: turn.cached_tokens,
      cacheWriteTokens: turn.cache_write_tokens,
      completionTokens: turn.completion_tokens,
      cost: turn.cost,
    },
  };
}
