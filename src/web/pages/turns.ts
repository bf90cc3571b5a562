import { type Context, Hono } from 'hono';
import { html } from 'hono/html';
import { streamSSE } from 'hono/streaming';
import { recentTurns, type TurnEvent, turnTrace } from '../../agents/index.ts';
import { formatDate, page, type WebEnv } from '../layout.ts';
import { agentStatus, turnBody } from '../turn-view.ts';
import { type PageDeps, scope } from './page-deps.ts';

const TURN_ID = /^[A-Za-z0-9_-]{1,100}$/;

/** The turn list, one turn's trace, and its live events. */
export function turnRoutes(deps: PageDeps): Hono<WebEnv> {
  const app = new Hono<WebEnv>();
  const { database } = deps;

  app.get('/turns', async (c) => {
    const session = c.get('session');
    const turns = await recentTurns(database, { userId: scope(session), limit: 100 });
    return page(c, {
      title: 'Turns',
      session,
      body: turns.length
        ? html`<div class="scroll"><table class="list">
            <thead><tr><th>When</th>${session.owner ? html`<th>User</th>` : ''}<th>Channel</th><th>Status</th><th>Request</th></tr></thead>
            <tbody>${turns.map(
              (turn) =>
                html`<tr><td><a href="/turns/${turn.id}">${formatDate(turn.queuedAt)}</a></td>${session.owner ? html`<td>${turn.userId}</td>` : ''}<td>${turn.channel ?? ''}</td><td><span class="badge">${turn.status}</span></td><td>${turn.request.slice(0, 140)}</td></tr>`,
            )}</tbody></table></div>`
        : html`<p class="empty">No turns yet. Send a message from <a href="/chat">Chat</a>.</p>`,
    });
  });

  const notFound = (c: Context<WebEnv>) =>
    page(c, {
      title: 'Turn not found',
      session: c.get('session'),
      status: 404,
      body: html`<p class="error">There is no turn ${(c.req.param('id') ?? '').slice(0, 100)} that you can see. Pick one from <a href="/turns">Turns</a>.</p>`,
    });

  app.get('/turns/:id', async (c) => {
    const id = c.req.param('id');
    if (!TURN_ID.test(id)) return notFound(c);
    const trace = await turnTrace(database, id);
    const session = c.get('session');
    if (!trace || !(session.owner || trace.turn.user_id === session.userId)) return notFound(c);
    return page(c, { title: `Turn ${id.slice(0, 8)}`, session, scripts: ['turn.js'], body: turnBody(trace) });
  });

  app.get('/turns/:id/events', async (c) => {
    const id = c.req.param('id');
    if (!TURN_ID.test(id)) return c.text('No such turn.', 404);
    const trace = await turnTrace(database, id);
    const session = c.get('session');
    if (!trace || !(session.owner || trace.turn.user_id === session.userId))
      return c.text('No such turn.', 404);
    return streamSSE(c, async (stream) => {
      const queue: TurnEvent[] = [];
      let wake: (() => void) | null = null;
      let ended = false;
      const unsubscribe = deps.turnEvents.subscribe(id, (event) => {
        queue.push(event);
        wake?.();
      });
      c.req.raw.signal.addEventListener('abort', () => {
        ended = true;
        wake?.();
      });
      try {
        if (
          queue.length === 0 &&
          ['completed', 'paused', 'interrupted', 'failed'].includes(trace.turn.status)
        ) {
          await stream.writeSSE({
            event: 'turn_end',
            data: JSON.stringify({ status: trace.turn.status, replay: true }),
          });
          return;
        }
        const deadline = Date.now() + 30 * 60_000;
        while (!ended && Date.now() < deadline) {
          const event = queue.shift();
          if (!event) {
            await new Promise<void>((resolve) => {
              wake = resolve;
              setTimeout(resolve, 15_000).unref();
            });
            wake = null;
            if (!queue.length && !ended) await stream.write(': keep-alive\n\n');
            continue;
          }
          const data = publicEvent(event);
          if (data) await stream.writeSSE({ event: event.type, data: JSON.stringify(data) });
          if (event.type === 'turn_end') break;
        }
      } finally {
        unsubscribe();
      }
    });
  });
  return app;
}

/** What the live trace needs of an event (tool arguments and results stay on the server). */
function publicEvent(event: TurnEvent): Record<string, unknown> | null {
  switch (event.type) {
    case 'agent_dispatched':
      return { agentId: event.agentId, mission: event.mission, dependsOn: event.dependsOn };
    case 'agent_start':
      return { agentId: event.agentId, wave: event.wave, status: 'running' };
    case 'agent_end':
      return { agentId: event.agentId, status: agentStatus(event.status), error: event.error ?? null };
    case 'skill_call_end':
      return {
        agentId: event.agentId,
        command: event.command,
        status: event.status,
        durationMs: event.durationMs,
        executionId: event.executionId,
      };
    case 'llm_call':
      return {
        role: event.role,
        model: event.model,
        latencyMs: event.latencyMs,
        promptTokens: event.usage.promptTokens,
        cachedTokens: event.usage.cachedTokens,
        completionTokens: event.usage.completionTokens,
        cost: event.usage.cost,
      };
    case 'turn_start':
      return { status: 'running' };
    case 'turn_end':
      return { status: event.status };
    default:
      return null;
  }
}
