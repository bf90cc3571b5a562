import { Hono } from 'hono';
import { html } from 'hono/html';
import { forgetMemory, listMemories, setMemoryImportance } from '../../memory/index.ts';
import { listTasksForDashboard } from '../../tasks/index.ts';
import { csrfField, formatDate, page, type WebEnv } from '../layout.ts';
import { formOf, type PageDeps, scope } from './page-deps.ts';

/** The task list, and the memories with their importance and forget forms. */
export function taskMemoryRoutes(deps: PageDeps): Hono<WebEnv> {
  const app = new Hono<WebEnv>();
  const { database } = deps;

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
  return app;
}
