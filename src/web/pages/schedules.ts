import { Hono } from 'hono';
import { html } from 'hono/html';
import { deliverySummary } from '../../channels/index.ts';
import { csrfField, page, type WebEnv } from '../layout.ts';
import { formOf, type PageDeps, scope } from './page-deps.ts';

/** The workflow schedules, and running one now. */
export function scheduleRoutes(deps: PageDeps): Hono<WebEnv> {
  const app = new Hono<WebEnv>();

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
            <thead><tr><th>Workflow</th>${session.owner ? html`<th>User</th>` : ''}<th>Schedule</th><th>Zone</th><th>Next run</th><th>Last run</th><th>Last status</th><th>Delivery</th><th></th></tr></thead>
            <tbody>${schedules.map(
              (schedule) =>
                html`<tr data-schedule="${schedule.skill}"><td><code>${schedule.name}</code><br><span class="meta">${schedule.description}</span></td>${session.owner ? html`<td>${schedule.user}</td>` : ''}<td><code>${schedule.schedule}</code></td><td>${schedule.timezone}</td><td>${schedule.next_run ?? ''}</td><td>${schedule.last_run ?? 'never'}</td><td>${schedule.last_status ? html`<span class="badge">${schedule.last_status}</span>` : ''}</td><td data-delivery="${schedule.delivery?.status ?? ''}">${schedule.delivery ? html`${deliverySummary(schedule.delivery)}${schedule.delivery.inbox ? html` · <a href="/inbox">inbox</a>` : ''}` : ''}</td>
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
  return app;
}
