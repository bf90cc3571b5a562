import { existsSync } from 'node:fs';
import { type Context, Hono } from 'hono';
import { html, raw } from 'hono/html';
import { streamSSE } from 'hono/streaming';
import { type TurnEngine, type TurnEvent, type TurnHub, turnTrace } from '../agents/index.ts';
import type { ChannelStatus, PairingApproval, PairingRequest } from '../channels/index.ts';
import type { Database } from '../db/index.ts';
import { StewardError } from '../errors.ts';
import { dailyUsage, type UsageDay } from '../llm/index.ts';
import {
  createConversation,
  forgetMemory,
  latestConversation,
  listMemories,
  recentMessages,
  recentTurns,
  setMemoryImportance,
} from '../memory/index.ts';
import type { SkillSnapshot } from '../skills/index.ts';
import { skillsVisibleTo, unstorableCharacter } from '../skills/index.ts';
import { listTasksForDashboard } from '../tasks/index.ts';
import { ensureUser } from '../users/index.ts';
import { csrfField, formatCost, formatDate, page, type WebEnv } from './layout.ts';
import { requireCsrf, requireSession } from './login.ts';
import { markdown, markdownToHtml } from './markdown.ts';
import type { WebSession } from './sessions.ts';
import { agentStatus, turnBody } from './turn-view.ts';

export const WEB_CHANNEL = 'web';
/** The built-in skill pages shipped with the package. */
const BUILTIN_SKILLS = new URL('../../skills/', import.meta.url);
const MAX_TEXT = 32_000;
const TURN_ID = /^[A-Za-z0-9_-]{1,100}$/;

export type PageDeps = {
  database: Database;
  engine: TurnEngine;
  turnEvents: TurnHub;
  skills: () => SkillSnapshot;
  breakers: () => Promise<Array<{ skill: string; state: string }>>;
  channels?: {
    status(): Promise<ChannelStatus[]>;
    approvePairing(code: string): Promise<PairingApproval>;
    pending(): Promise<PairingRequest[]>;
  };
  /** The workflow scheduler (fields as `steward schedules --json` prints them). */
  schedules?: {
    list(userId?: string): Promise<ScheduleRow[]>;
    runNow(name: string, userId?: string): Promise<unknown>;
  };
  now?: () => Date;
};

type ScheduleRow = {
  name: string;
  skill: string;
  user: string;
  description: string;
  schedule: string;
  timezone: string;
  next_run: string | null;
  last_run: string | null;
  last_status: string | null;
};

/** Whose data a session sees: its own user's, or everyone's (null) for the owner. */
const scope = (session: WebSession): string | null => (session.owner ? null : session.userId);

function textProblem(text: string): string | null {
  if (!text.trim()) return 'Type a message first.';
  if (text.length > MAX_TEXT) return `The message is over ${MAX_TEXT} characters; send a shorter one.`;
  const bad = unstorableCharacter(text);
  return bad
    ? `The message contains ${bad.what} at character ${bad.index + 1}; remove it and send again.`
    : null;
}

async function formOf(c: {
  req: { parseBody(): Promise<Record<string, unknown>> };
}): Promise<Record<string, string>> {
  const body = await c.req.parseBody().catch(() => ({}));
  return Object.fromEntries(
    Object.entries(body).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}

export function pageRoutes(deps: PageDeps): Hono<WebEnv> {
  const app = new Hono<WebEnv>();
  const { database } = deps;
  const guard = requireSession(database);
  const csrf = requireCsrf();
  for (const path of [
    '/',
    '/chat',
    '/chat/*',
    '/turns',
    '/turns/*',
    '/skills',
    '/tasks',
    '/memories',
    '/memories/*',
    '/schedules',
    '/schedules/*',
    '/channels',
    '/channels/*',
    '/usage',
  ]) {
    app.use(path, guard, csrf);
  }

  app.get('/', (c) => c.redirect('/chat', 302));

  // --- Chat ---
  app.get('/chat', async (c) => {
    const session = c.get('session');
    await ensureUser(database, session.userId);
    const conversation = await latestConversation(database, session.userId, WEB_CHANNEL);
    const messages = (await recentMessages(database, conversation.id, { limit: 100 })).filter(
      (message) =>
        (message.role === 'user' || message.role === 'assistant') &&
        message.content &&
        !message.toolCalls?.length,
    );
    const error = c.req.query('error');
    return page(c, {
      title: 'Chat',
      session,
      scripts: ['chat.js'],
      body: html`<ol class="messages" id="messages" aria-live="polite">
          ${messages.map((message) =>
            message.role === 'user'
              ? html`<li class="message user" data-role="user">${message.content}</li>`
              : html`<li class="message reply markdown" data-role="reply">${markdown(message.content)}${message.turnId ? html`<a class="trace" href="/turns/${message.turnId}">trace</a>` : ''}</li>`,
          )}
        </ol>
        ${messages.length ? '' : html`<p class="empty" id="chat-empty">No messages yet. Say hello — Steward answers here, and each reply links to its trace.</p>`}
        ${error ? html`<p class="error" role="alert">${error.slice(0, 300)}</p>` : ''}
        <form method="post" action="/chat" id="chat-form" class="chat-form" data-conversation="${conversation.id}">
          ${csrfField(session)}
          <label for="text" class="visually-hidden">Message</label>
          <textarea id="text" name="text" rows="3" required maxlength="${MAX_TEXT}" placeholder="Message Steward (Enter sends, Shift+Enter for a new line; /new starts over)"></textarea>
          <div class="actions"><button type="submit">Send</button></div>
        </form>
        <form method="post" action="/chat/new" class="inline">${csrfField(session)}<button type="submit" class="secondary">New conversation</button></form>`,
    });
  });

  /** The form without script: runs the turn, then shows the page again. */
  app.post('/chat', async (c) => {
    const session = c.get('session');
    const text = (await formOf(c)).text ?? '';
    const problem = textProblem(text);
    if (problem) return c.redirect(`/chat?error=${encodeURIComponent(problem)}`, 303);
    if (text.trim() === '/new') {
      await createConversation(database, session.userId, WEB_CHANNEL);
      return c.redirect('/chat', 303);
    }
    const conversation = await latestConversation(database, session.userId, WEB_CHANNEL);
    try {
      await deps.engine.handle({
        userId: session.userId,
        text,
        channel: WEB_CHANNEL,
        conversationId: conversation.id,
      });
    } catch (error) {
      if (error instanceof StewardError)
        return c.redirect(`/chat?error=${encodeURIComponent(error.message)}`, 303);
      throw error;
    }
    return c.redirect('/chat', 303);
  });

  app.post('/chat/new', async (c) => {
    await createConversation(database, c.get('session').userId, WEB_CHANNEL);
    return c.redirect('/chat', 303);
  });

  /** The page's script posts here: the reply streams as server-sent events. */
  app.post('/chat/stream', async (c) => {
    const session = c.get('session');
    const text = (await formOf(c)).text ?? '';
    const problem = textProblem(text);
    return streamSSE(c, async (stream) => {
      if (problem) {
        await stream.writeSSE({ event: 'error', data: JSON.stringify({ message: problem }) });
        return;
      }
      if (text.trim() === '/new') {
        await createConversation(database, session.userId, WEB_CHANNEL);
        await stream.writeSSE({
          event: 'done',
          data: JSON.stringify({ html: markdownToHtml('Started a new conversation.'), turnId: null }),
        });
        return;
      }
      const conversation = await latestConversation(database, session.userId, WEB_CHANNEL);
      const queue: TurnEvent[] = [];
      let wake: (() => void) | null = null;
      let finished = false;
      const turn = deps.engine
        .handle({
          userId: session.userId,
          text,
          channel: WEB_CHANNEL,
          conversationId: conversation.id,
          signal: c.req.raw.signal,
          emit: (event) => {
            if (event.type === 'turn_start' || event.type === 'text_delta') {
              queue.push(event);
              wake?.();
            }
          },
        })
        .finally(() => {
          finished = true;
          wake?.();
        });
      while (!finished || queue.length) {
        const event = queue.shift();
        if (event?.type === 'turn_start') {
          await stream.writeSSE({ event: 'turn', data: JSON.stringify({ turnId: event.turnId }) });
        } else if (event?.type === 'text_delta') {
          await stream.writeSSE({ event: 'delta', data: JSON.stringify({ text: event.text }) });
        } else if (!event) {
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
          wake = null;
        }
      }
      try {
        const outcome = await turn;
        await stream.writeSSE({
          event: 'done',
          data: JSON.stringify({
            html: markdownToHtml(outcome.reply),
            turnId: outcome.turnId,
            status: outcome.status,
          }),
        });
      } catch (error) {
        await stream.writeSSE({
          event: 'error',
          data: JSON.stringify({
            message: error instanceof StewardError ? error.message : 'The turn failed; see the server log.',
          }),
        });
      }
    });
  });

  // --- Turns ---
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

  // --- Skills ---
  app.get('/skills', async (c) => {
    const session = c.get('session');
    // The owner sees every user's workflows (labelled below); anyone else only shared skills and their own.
    const snapshot = session.owner ? deps.skills() : skillsVisibleTo(deps.skills(), session.userId);
    const breakers = new Map((await deps.breakers()).map((row) => [row.skill, row.state]));
    const skills = [...snapshot.skills.values()].sort((a, b) => a.name.localeCompare(b.name));
    // A user skill overrides a built-in when the package ships a page of the same name.
    const overrides = (skill: (typeof skills)[number]) =>
      skill.source === 'user' && existsSync(new URL(`${skill.domain}/${skill.action}.md`, BUILTIN_SKILLS));
    return page(c, {
      title: 'Skills',
      session,
      body: html`${
        snapshot.diagnostics.length
          ? html`<section class="card"><h2>Problems in skill files</h2><ul class="diagnostics">${snapshot.diagnostics.map(
              (d) =>
                html`<li class="${d.severity}"><strong>${d.severity}</strong> <code>${d.path}</code>: ${d.message}</li>`,
            )}</ul></section>`
          : html`<p>Every skill file loaded without problems.</p>`
      }
        <div class="scroll"><table class="list">
          <thead><tr><th>Skill</th><th>Source</th><th>Kind</th><th>Breaker</th><th>Description</th></tr></thead>
          <tbody>${skills.map(
            (
              skill,
            ) => html`<tr id="skill-${skill.name}"><td><details><summary><code>${skill.name}</code></summary><div class="markdown">${markdown(skill.body)}</div></details></td>
              <td>${overrides(skill) ? 'override' : skill.source === 'builtin' ? 'built-in' : skill.source}${skill.owner ? ` (owner ${skill.owner})` : ''}</td>
              <td>${skill.readonly ? 'read-only' : 'mutating'}</td>
              <td><span class="badge breaker-${breakers.get(skill.name) ?? 'closed'}">${breakers.get(skill.name) ?? 'closed'}</span></td>
              <td>${skill.description}</td></tr>`,
          )}</tbody></table></div>`,
    });
  });

  // --- Tasks ---
  app.get('/tasks', async (c) => {
    const session = c.get('session');
    const tasks = await listTasksForDashboard(database, { userId: scope(session), limit: 200 });
    return page(c, {
      title: 'Tasks',
      session,
      body: tasks.length
        ? html`<div class="scroll"><table class="list">
            <thead><tr><th>Title</th>${session.owner ? html`<th>User</th>` : ''}<th>Status</th><th>Priority</th><th>Due</th><th>Updated</th></tr></thead>
            <tbody>${tasks.map(
              (task) =>
                html`<tr data-task-id="${task.id}"><td>${task.title}</td>${session.owner ? html`<td>${task.userId}</td>` : ''}<td><span class="badge">${task.status}</span></td><td>${task.priority}</td><td>${task.dueDate ?? ''}</td><td>${formatDate(task.updatedAt)}</td></tr>`,
            )}</tbody></table></div>`
        : html`<p class="empty">No tasks yet. Ask in <a href="/chat">Chat</a>, e.g. “add a task to call the plumber”.</p>`,
    });
  });

  // --- Memories ---
  app.get('/memories', async (c) => {
    const session = c.get('session');
    const query = (c.req.query('q') ?? '').slice(0, 200);
    const memories = await listMemories(database, { userId: scope(session), query, limit: 200 });
    const notice = c.req.query('notice');
    return page(c, {
      title: 'Memories',
      session,
      body: html`<form method="get" action="/memories" class="search" role="search">
          <label for="q">Search memories</label>
          <input id="q" name="q" type="search" value="${query}">
          <button type="submit">Search</button>
        </form>
        ${notice ? html`<p class="notice" role="status">${notice.slice(0, 200)}</p>` : ''}
        ${
          memories.length
            ? html`<ul class="memories">${memories.map(
                (memory) => html`<li class="card" data-memory-id="${memory.id}">
                <p>${memory.content}</p>
                <p class="meta">${memory.category}${session.owner ? ` · ${memory.userId}` : ''} · ${memory.tags.join(', ')}</p>
                <form method="post" action="/memories/${memory.id}/importance" class="inline">${csrfField(session)}
                  <label>Importance <input name="importance" type="number" min="0" max="1" step="0.05" value="${memory.importance.toFixed(2)}"></label>
                  <button type="submit">Save</button>
                </form>
                <form method="post" action="/memories/${memory.id}/forget" class="inline">${csrfField(session)}<button type="submit" class="danger">Forget</button></form>
              </li>`,
              )}</ul>`
            : html`<p class="empty">${query ? 'No memory matches that search.' : 'No memories yet. Steward saves what you tell it to remember.'}</p>`
        }`,
    });
  });

  app.post('/memories/:id/importance', async (c) => {
    const session = c.get('session');
    const value = Number((await formOf(c)).importance);
    if (!Number.isFinite(value) || value < 0 || value > 1) {
      return c.redirect(
        `/memories?notice=${encodeURIComponent('Importance must be a number from 0 to 1.')}`,
        303,
      );
    }
    const done = await setMemoryImportance(database, scope(session), c.req.param('id'), value);
    return c.redirect(
      `/memories?notice=${encodeURIComponent(done ? 'Importance saved.' : 'No such memory.')}`,
      303,
    );
  });

  app.post('/memories/:id/forget', async (c) => {
    const done = await forgetMemory(database, scope(c.get('session')), c.req.param('id'));
    return c.redirect(`/memories?notice=${encodeURIComponent(done ? 'Forgotten.' : 'No such memory.')}`, 303);
  });

  // --- Schedules ---
  app.get('/schedules', async (c) => {
    const session = c.get('session');
    if (!deps.schedules) {
      return page(c, {
        title: 'Schedules',
        session,
        body: html`<p class="empty">This server runs no scheduler.</p>`,
      });
    }
    const schedules = await deps.schedules.list(scope(session) ?? undefined);
    const notice = c.req.query('notice');
    return page(c, {
      title: 'Schedules',
      session,
      body: html`${notice ? html`<p class="notice" role="status">${notice.slice(0, 300)}</p>` : ''}
        ${
          schedules.length
            ? html`<div class="scroll"><table class="list">
            <thead><tr><th>Workflow</th>${session.owner ? html`<th>User</th>` : ''}<th>Schedule</th><th>Zone</th><th>Next run</th><th>Last run</th><th>Last status</th><th></th></tr></thead>
            <tbody>${schedules.map(
              (schedule) =>
                html`<tr data-schedule="${schedule.skill}"><td><code>${schedule.name}</code><br><span class="meta">${schedule.description}</span></td>${session.owner ? html`<td>${schedule.user}</td>` : ''}<td><code>${schedule.schedule}</code></td><td>${schedule.timezone}</td><td>${schedule.next_run ?? ''}</td><td>${schedule.last_run ?? 'never'}</td><td>${schedule.last_status ? html`<span class="badge">${schedule.last_status}</span>` : ''}</td>
                <td><form method="post" action="/schedules/run" class="inline">${csrfField(session)}<input type="hidden" name="name" value="${schedule.skill}"><input type="hidden" name="user" value="${schedule.user}"><button type="submit" class="secondary">Run now</button></form></td></tr>`,
            )}</tbody></table></div>`
            : html`<p class="empty">Nothing is scheduled. Ask in <a href="/chat">Chat</a> for a workflow on a schedule (“every weekday at 8, brief me on my calendar”), or give a <code>workflows/*.md</code> page a <code>schedule</code>.</p>`
        }`,
    });
  });

  app.post('/schedules/run', async (c) => {
    const session = c.get('session');
    const form = await formOf(c);
    const back = (notice: string) => c.redirect(`/schedules?notice=${encodeURIComponent(notice)}`, 303);
    if (!deps.schedules) return back('This server runs no scheduler.');
    const user = session.owner ? form.user || session.userId : session.userId;
    const known = (await deps.schedules.list(user)).find((schedule) => schedule.skill === form.name);
    if (!known) return back('No such schedule.');
    // A run is a whole turn: it goes on in the background, and its result is delivered like a scheduled one.
    void deps.schedules.runNow(known.skill, user).catch(() => undefined);
    return back(
      `Started ${known.name}: the result is delivered to ${user} when it ends, and its status shows here.`,
    );
  });

  // --- Channels ---
  app.get('/channels', async (c) => {
    const session = c.get('session');
    const statuses = deps.channels ? await deps.channels.status() : [];
    const pending = session.owner && deps.channels ? await deps.channels.pending() : [];
    const notice = c.req.query('notice');
    return page(c, {
      title: 'Channels',
      session,
      body: html`${notice ? html`<p class="notice" role="status">${notice.slice(0, 300)}</p>` : ''}
        <div class="scroll"><table class="list">
          <thead><tr><th>Channel</th><th>Configured</th><th>Mode</th><th>Backlog</th><th>Failed</th><th>Rejected</th><th>Last in</th><th>Last out</th><th>Problems</th></tr></thead>
          <tbody>${statuses.map(
            (s) =>
              html`<tr data-channel="${s.channel}"><td>${s.channel}</td><td>${s.configured ? 'yes' : 'no'}</td><td>${s.mode ?? ''}</td><td>${s.backlog}</td><td>${s.failed}</td><td>${s.rejected}</td><td>${formatDate(s.lastInboundAt)}</td><td>${formatDate(s.lastOutboundAt)}</td><td>${s.problems.join(' ')}</td></tr>`,
          )}</tbody></table></div>
        ${
          session.owner
            ? html`<h2>Pairing requests</h2>${
                pending.length
                  ? html`<ul class="pairings">${pending.map(
                      (
                        p,
                      ) => html`<li class="card">${p.channel} · ${p.senderName ?? p.senderId} · code <code>${p.code}</code> · expires ${formatDate(p.expiresAt)}
                    <form method="post" action="/channels/pairing/approve" class="inline">${csrfField(session)}<input type="hidden" name="code" value="${p.code}"><button type="submit">Approve</button></form></li>`,
                    )}</ul>`
                  : html`<p class="empty">No pairing requests are waiting.</p>`
              }`
            : ''
        }`,
    });
  });

  app.post('/channels/pairing/approve', async (c) => {
    const session = c.get('session');
    if (!session.owner || !deps.channels) {
      return c.redirect(
        `/channels?notice=${encodeURIComponent('Only the owner approves pairing requests.')}`,
        303,
      );
    }
    const code = ((await formOf(c)).code ?? '').slice(0, 50);
    const approval = await deps.channels.approvePairing(code);
    const notice = approval.ok ? `Approved: ${approval.userId} can now talk to Steward.` : approval.problem;
    return c.redirect(`/channels?notice=${encodeURIComponent(notice)}`, 303);
  });

  // --- Usage ---
  app.get('/usage', async (c) => {
    const session = c.get('session');
    const days = await dailyUsage(database, {
      days: 30,
      ...(session.owner ? {} : { userId: session.userId }),
    });
    return page(c, { title: 'Usage', session, body: usageBody(days) });
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

// --- Charts (inline SVG, no script) ---

function barChart(title: string, bars: Array<{ label: string; value: number; text: string }>) {
  const width = 640;
  const height = 200;
  const max = Math.max(...bars.map((bar) => bar.value), 0) || 1;
  const step = bars.length ? Math.min(80, width / bars.length) : width;
  return html`<figure class="chart"><figcaption>${title}</figcaption>
    <svg viewBox="0 0 ${width} ${height + 20}" role="img" aria-label="${title}">
      ${bars.map((bar, index) => {
        const h = Math.round((bar.value / max) * height);
        return html`<g><rect x="${(index * step + 1).toFixed(1)}" y="${height - h}" width="${Math.max(1, step - 2).toFixed(1)}" height="${h}" fill="#3b6fb6"><title>${bar.label}: ${bar.text}</title></rect></g>`;
      })}
      <line x1="0" y1="${height}" x2="${width}" y2="${height}" stroke="#888" stroke-width="1"></line>
      ${bars.length ? html`<text x="0" y="${height + 15}" font-size="12" fill="#555">${bars[0]!.label}</text><text x="${width}" y="${height + 15}" font-size="12" fill="#555" text-anchor="end">${bars[bars.length - 1]!.label}</text>` : ''}
    </svg></figure>`;
}

function usageBody(rows: UsageDay[]) {
  if (!rows.length) return html`<p class="empty">No model calls in the last 30 days.</p>`;
  const byDay = new Map<string, { cost: number; prompt: number; cached: number }>();
  const byModel = new Map<string, { prompt: number; completion: number; cost: number }>();
  for (const row of rows) {
    const day = byDay.get(row.date) ?? { cost: 0, prompt: 0, cached: 0 };
    day.cost += row.cost_usd;
    day.prompt += row.prompt_tokens;
    day.cached += row.cached_tokens;
    byDay.set(row.date, day);
    const model = byModel.get(row.model) ?? { prompt: 0, completion: 0, cost: 0 };
    model.prompt += row.prompt_tokens;
    model.completion += row.completion_tokens;
    model.cost += row.cost_usd;
    byModel.set(row.model, model);
  }
  const days = [...byDay.entries()].sort(([a], [b]) => a.localeCompare(b));
  const models = [...byModel.entries()].sort(
    ([, a], [, b]) => b.prompt + b.completion - (a.prompt + a.completion),
  );
  const total = days.reduce((sum, [, day]) => sum + day.cost, 0);
  return html`<p>Last 30 days: ${formatCost(total)} in total.</p>
    ${barChart(
      'Cost per day (USD)',
      days.map(([date, day]) => ({ label: date, value: day.cost, text: formatCost(day.cost) })),
    )}
    ${barChart(
      'Cached share of prompt tokens per day (%)',
      days.map(([date, day]) => {
        const share = day.prompt ? (100 * day.cached) / day.prompt : 0;
        return { label: date, value: share, text: `${share.toFixed(1)}%` };
      }),
    )}
    ${barChart(
      'Tokens per model',
      models.map(([model, m]) => ({
        label: model,
        value: m.prompt + m.completion,
        text: `${m.prompt + m.completion} tokens`,
      })),
    )}
    <div class="scroll"><table class="list"><thead><tr><th>Model</th><th>Prompt</th><th>Completion</th><th>Cost</th></tr></thead>
    <tbody>${models.map(([model, m]) => html`<tr><td><code>${model}</code></td><td>${m.prompt}</td><td>${m.completion}</td><td>${formatCost(m.cost)}</td></tr>`)}</tbody></table></div>
    ${raw('')}`;
}
