import { Hono } from 'hono';
import { html } from 'hono/html';
import { forgetMemory, listMemories, setMemoryImportance } from '../../memory/index.ts';
import { csrfField, page, type WebEnv } from '../layout.ts';
import { formOf, type PageDeps, scope } from './page-deps.ts';

/** The memories with their importance and forget forms. */
export function memoryRoutes(deps: PageDeps): Hono<WebEnv> {
  const app = new Hono<WebEnv>();
  const { database } = deps;

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
