import { Hono } from 'hono';
import { html } from 'hono/html';
import { getTurn } from '../../agents/index.ts';
import { deliverySummary } from '../../channels/index.ts';
import { parseCron, skillsVisibleTo } from '../../skills/index.ts';
import { ensureUser, userIdProblem } from '../../users/index.ts';
import type { RunWithDelivery } from '../../workflows/index.ts';
import { csrfField, formatCost, formatDate, page, type WebEnv } from '../layout.ts';
import type { WebSession } from '../sessions.ts';
import { formOf, type PageDeps, type ScheduleRow, scope } from './page-deps.ts';

const ZONE = /^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/;

/**
 * The workflow schedules: create one from a cron expression and a workflow, pause and resume,
 * run now, and each schedule's latest runs with their output and delivery.
 */
export function scheduleRoutes(deps: PageDeps): Hono<WebEnv> {
  const app = new Hono<WebEnv>();
  const { schedules } = deps;

  app.get('/schedules', async (c) => {
    const session = c.get('session');
    if (!schedules) {
      return page(c, {
        title: 'Schedules',
        session,
        body: html`<p class="empty">This server runs no scheduler.</p>`,
      });
    }
    const rows = await schedules.list(scope(session) ?? undefined);
    const runs = await Promise.all(rows.map((row) => schedules.runs(row.skill, row.user, 10)));
    const outputs = await Promise.all(
      runs.map((list) => Promise.all(list.map((entry) => outputOf(deps, entry)))),
    );
    const notice = c.req.query('notice');
    const workflows = [...skillsVisibleTo(deps.skills(), session.userId).skills.values()]
      .filter((skill) => skill.domain === 'workflows')
      .map((skill) => skill.action)
      .sort();
    return page(c, {
      title: 'Schedules',
      session,
      body: html`${notice ? html`<p class="notice" role="status">${notice.slice(0, 300)}</p>` : ''}
        ${
          rows.length
            ? html`<ul class="schedules">${rows.map((row, index) => scheduleItem(row, session, runs[index]!, outputs[index]!))}</ul>`
            : html`<p class="empty">Nothing is scheduled. Add one below, ask in <a href="/chat">Chat</a> for a workflow on a schedule (“every weekday at 8, brief me on my calendar”), or give a <code>workflows/*.md</code> page a <code>schedule</code>.</p>`
        }
        ${deps.executor ? createForm(session, workflows) : ''}`,
    });
  });

  const back = (c: { redirect(location: string, status: 303): Response }, notice: string) =>
    c.redirect(`/schedules?notice=${encodeURIComponent(notice)}`, 303);
  /** The schedule a form names, when the session may act on it (a user only on their own). */
  const target = async (session: WebSession, form: Record<string, string>) => {
    if (!schedules) return null;
    const user = session.owner ? form.user || session.userId : session.userId;
    const known = (await schedules.list(user)).find((row) => row.skill === form.name);
    return known ? { user, known } : null;
  };

  app.post('/schedules/run', async (c) => {
    if (!schedules) return back(c, 'This server runs no scheduler.');
    const found = await target(c.get('session'), await formOf(c));
    if (!found) return back(c, 'No such schedule.');
    // A run is a whole turn: it goes on in the background, and its result is delivered like a scheduled one.
    void schedules.runNow(found.known.skill, found.user).catch(() => undefined);
    return back(
      c,
      `Started ${found.known.name}: the result is delivered to ${found.user} when it ends; its run shows under Runs.`,
    );
  });

  for (const [action, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const) {
    app.post(`/schedules/${action}`, async (c) => {
      if (!schedules) return back(c, 'This server runs no scheduler.');
      const found = await target(c.get('session'), await formOf(c));
      if (!found) return back(c, 'No such schedule.');
      const result = await schedules.setPaused(found.known.skill, found.user, paused);
      if ('problem' in result) return back(c, `Not ${paused ? 'paused' : 'resumed'}: ${result.problem}`);
      return back(
        c,
        paused
          ? `Paused ${found.known.name}: it does not run on its schedule until you resume it (Run now still works).`
          : `Resumed ${found.known.name}: it runs on "${found.known.schedule}" again.`,
      );
    });
  }

  app.post('/schedules/create', async (c) => {
    const session = c.get('session');
    const form = await formOf(c);
    if (!deps.executor || !schedules) return back(c, 'This server cannot write workflows.');
    const name = (form.workflow ?? '').trim();
    const cron = (form.cron ?? '').trim();
    const timezone = (form.timezone ?? '').trim();
    const user = session.owner ? (form.user ?? '').trim() || session.userId : session.userId;
    const userProblem = userIdProblem(user);
    if (userProblem) return back(c, `Not scheduled: ${userProblem}`);
    const visible = skillsVisibleTo(deps.skills(), user);
    if (!visible.skills.get(`workflows.${name}`)) {
      return back(c, `Not scheduled: there is no workflow "${name.slice(0, 60)}". Pick one from the list.`);
    }
    const parsed = parseCron(cron);
    if (!parsed.ok) return back(c, `Not scheduled: ${parsed.problem}`);
    if (timezone && !ZONE.test(timezone)) {
      return back(c, 'Not scheduled: the time zone must be an IANA name such as Europe/Berlin, or empty.');
    }
    const who = await ensureUser(deps.database, user);
    const outcome = await deps.executor.execute({
      command: `workflow.build --name ${name} --schedule "${parsed.cron.expression}"${timezone ? ` --timezone ${timezone}` : ''}`,
      // The signed-in user's own action, as `steward run` would be: no agent, nothing for the sentinel.
      caller: { kind: 'cli' },
      user: { id: who.id, timezone: who.timezone },
      channel: 'web',
      confirmed: true,
    });
    if (outcome.status !== 'ok') return back(c, `Not scheduled: ${outcome.content}`);
    await deps.reloadSkills?.();
    return back(c, outcome.content);
  });
  return app;
}

/** What a run produced: its turn's reply (a failed run's error when it has no turn). */
async function outputOf(deps: PageDeps, entry: RunWithDelivery): Promise<string | null> {
  if (!entry.run.turnId) return entry.run.error;
  const turn = await getTurn(deps.database, entry.run.turnId);
  return turn?.reply ?? entry.run.error;
}

function scheduleItem(
  row: ScheduleRow,
  session: WebSession,
  runs: RunWithDelivery[],
  outputs: Array<string | null>,
) {
  const hidden = html`${csrfField(session)}<input type="hidden" name="name" value="${row.skill}"><input type="hidden" name="user" value="${row.user}">`;
  return html`<li class="card schedule" data-schedule="${row.skill}" data-paused="${row.paused ? 'yes' : 'no'}">
    <p class="schedule-name"><code>${row.name}</code>${row.paused ? html` <span class="badge paused">paused</span>` : ''}${session.owner ? html` <span class="meta">· ${row.user}</span>` : ''}</p>
    ${row.description ? html`<p class="meta">${row.description}</p>` : ''}
    <dl class="facts">
      <div><dt>Schedule</dt><dd><code>${row.schedule}</code> (${row.timezone})</dd></div>
      <div><dt>Next run</dt><dd>${row.paused ? 'paused' : (row.next_run ?? 'none')}</dd></div>
      <div><dt>Last run</dt><dd>${row.last_run ?? 'never'}${row.last_status ? html` <span class="badge">${row.last_status}</span>` : ''}</dd></div>
      <div><dt>Delivery</dt><dd data-delivery="${row.delivery?.status ?? ''}">${row.delivery ? html`${deliverySummary(row.delivery)}${row.delivery.inbox ? html` · <a href="/inbox">inbox</a>` : ''}` : '—'}</dd></div>
    </dl>
    <div class="actions">
      <form method="post" action="/schedules/run" class="inline">${hidden}<button type="submit">Run now</button></form>
      <form method="post" action="/schedules/${row.paused ? 'resume' : 'pause'}" class="inline">${hidden}<button type="submit" class="secondary">${row.paused ? 'Resume' : 'Pause'}</button></form>
    </div>
    <details class="runs"><summary>Runs (${runs.length}${runs.length === 10 ? ', latest' : ''})</summary>
      ${
        runs.length
          ? html`<ol class="run-list">${runs.map(
              ({ run, delivery }, index) => html`<li data-run="${run.id}" data-run-status="${run.status}">
                <p><span class="badge">${run.status}</span> ${formatDate(run.startedAt ?? run.scheduledFor)} UTC · ${run.trigger}${run.costUsd ? ` · ${formatCost(run.costUsd)}` : ''}${run.turnId ? html` · <a href="/turns/${run.turnId}">trace</a>` : ''}</p>
                <p class="meta">Delivery: ${delivery ? deliverySummary(delivery) : run.status === 'running' ? 'not yet' : 'none'}</p>
                ${outputs[index] ? html`<pre class="output">${outputs[index]!.slice(0, 2000)}</pre>` : ''}
              </li>`,
            )}</ol>`
          : html`<p class="empty">No runs yet.</p>`
      }
    </details>
  </li>`;
}

function createForm(session: WebSession, workflows: string[]) {
  return html`<section class="card">
    <h2>New schedule</h2>
    ${
      workflows.length
        ? html`<form method="post" action="/schedules/create" class="create-schedule">${csrfField(session)}
        <label>Workflow <select name="workflow" required>${workflows.map((name) => html`<option value="${name}">${name}</option>`)}</select></label>
        <label>Cron expression <input name="cron" required placeholder="0 8 * * 1-5" aria-describedby="cron-hint"></label>
        <label>Time zone <input name="timezone" placeholder="your profile's zone"></label>
        ${session.owner ? html`<label>For user <input name="user" placeholder="${session.userId}"></label>` : ''}
        <button type="submit">Schedule</button>
        <p class="hint" id="cron-hint">Five fields: minute hour day-of-month month day-of-week. <code>0 8 * * 1-5</code> is 08:00 on weekdays; <code>*/30 * * * *</code> every half hour. Setting a schedule on a workflow replaces the one it had.</p>
      </form>`
        : html`<p class="empty">There is no workflow to schedule yet. Ask in <a href="/chat">Chat</a> to build one (workflow.build).</p>`
    }
  </section>`;
}
