import { Hono } from 'hono';
import { html } from 'hono/html';
import {
  ACTIVE_STATUSES,
  archiveTask,
  isRealDate,
  listTasksForDashboard,
  localDate,
  TASK_DUE_FILTERS,
  TASK_PRIORITIES,
  TASK_STATUSES,
  type TaskContext,
  type TaskListFilter,
  type TaskListItem,
  type TaskPriority,
  taskOwner,
  updateTask,
} from '../../tasks/index.ts';
import { ensureUser } from '../../users/index.ts';
import { csrfField, formatDate, page, type WebEnv } from '../layout.ts';
import type { WebSession } from '../sessions.ts';
import { formOf, type PageDeps, scope } from './page-deps.ts';

const STATUS_CHOICES = ['open', ...TASK_STATUSES] as const;
const DUE_LABELS: Record<(typeof TASK_DUE_FILTERS)[number], string> = {
  overdue: 'overdue',
  today: 'due today',
  week: 'due in the next 7 days',
  none: 'no due date',
};

const pick = <T extends string>(choices: readonly T[], value: string | undefined): T | undefined =>
  choices.find((choice) => choice === value);

/** The filter a query (or a posted form) asks for; unknown values are ignored. */
function filterOf(values: Record<string, string | undefined>): TaskListFilter {
  const status = pick(STATUS_CHOICES, values.status);
  const priority = pick(TASK_PRIORITIES, values.priority);
  const due = pick(TASK_DUE_FILTERS, values.due);
  return { ...(status ? { status } : {}), ...(priority ? { priority } : {}), ...(due ? { due } : {}) };
}

function listHref(filter: TaskListFilter, notice?: string): string {
  const query = new URLSearchParams();
  if (filter.status) query.set('status', filter.status);
  if (filter.priority) query.set('priority', filter.priority);
  if (filter.due) query.set('due', filter.due);
  if (notice) query.set('notice', notice);
  const text = query.toString();
  return text ? `/tasks?${text}` : '/tasks';
}

/**
 * The task list, filtered by status, priority and due date, with mark done, edit (title,
 * priority, due date) and archive on each task. A user acts on their own tasks; the owner on anyone's.
 */
export function taskRoutes(deps: PageDeps): Hono<WebEnv> {
  const app = new Hono<WebEnv>();
  const { database } = deps;
  const now = deps.now ?? (() => new Date());

  app.get('/tasks', async (c) => {
    const session = c.get('session');
    const filter = filterOf(c.req.query());
    const { timezone } = await ensureUser(database, session.userId);
    const today = localDate(timezone, now()) ?? now().toISOString().slice(0, 10);
    const tasks = await listTasksForDashboard(database, {
      userId: scope(session),
      limit: 200,
      filter: { ...filter, today },
    });
    const notice = c.req.query('notice');
    const filtered = Boolean(filter.status || filter.priority || filter.due);
    return page(c, {
      title: 'Tasks',
      session,
      body: html`${filterForm(filter)}
        ${notice ? html`<p class="notice" role="status">${notice.slice(0, 300)}</p>` : ''}
        ${
          tasks.length
            ? html`<ul class="tasks">${tasks.map((task) => taskItem(task, session, filter))}</ul>`
            : filtered
              ? html`<p class="empty">No task matches this filter. <a href="/tasks">Show all tasks</a></p>`
              : html`<p class="empty">No tasks yet. Ask in <a href="/chat">Chat</a>, e.g. “add a task to call the plumber”.</p>`
        }`,
    });
  });

  /** The task's context when the session may act on it, else null (unknown and forbidden look alike). */
  const contextFor = async (session: WebSession, taskId: string): Promise<TaskContext | null> => {
    const userId = await taskOwner(database, scope(session), taskId);
    if (!userId) return null;
    const { timezone } = await ensureUser(database, userId);
    return { database, userId, timezone, actor: `user:${session.userId}`, executionId: null, now };
  };

  app.post('/tasks/:id/done', async (c) => {
    const form = await formOf(c);
    const back = (notice: string) => c.redirect(listHref(filterOf(form), notice), 303);
    const ctx = await contextFor(c.get('session'), c.req.param('id'));
    if (!ctx) return back('No such task.');
    const outcome = await updateTask(ctx, c.req.param('id'), { status: 'done' });
    if (!outcome.ok) return back(outcome.message);
    const next = outcome.value.nextOccurrence;
    return back(
      `Done: ${outcome.value.task.title}.${next ? ` It repeats: the next one is due ${next.dueDate}.` : ''}`,
    );
  });

  app.post('/tasks/:id/edit', async (c) => {
    const form = await formOf(c);
    const back = (notice: string) => c.redirect(listHref(filterOf(form), notice), 303);
    const ctx = await contextFor(c.get('session'), c.req.param('id'));
    if (!ctx) return back('No such task.');
    const title = (form.title ?? '').trim();
    if (!title) return back('Not saved: a task needs a title.');
    if (title.length > 500) return back('Not saved: keep the title under 500 characters.');
    const priority = pick(TASK_PRIORITIES, form.priority) as TaskPriority | undefined;
    if (!priority) return back(`Not saved: the priority must be one of ${TASK_PRIORITIES.join(', ')}.`);
    const due = (form.due_date ?? '').trim();
    if (due && !isRealDate(due)) {
      return back(`Not saved: "${due.slice(0, 40)}" is not a date. Use YYYY-MM-DD.`);
    }
    const outcome = await updateTask(ctx, c.req.param('id'), { title, priority, dueDate: due || null });
    if (!outcome.ok) return back(`Not saved: ${outcome.message}`);
    const changed = outcome.value.changes.map((change) => change.field.replace('_', ' '));
    return back(changed.length ? `Saved ${changed.join(', ')}.` : 'Nothing changed.');
  });

  app.post('/tasks/:id/archive', async (c) => {
    const form = await formOf(c);
    const back = (notice: string) => c.redirect(listHref(filterOf(form), notice), 303);
    const ctx = await contextFor(c.get('session'), c.req.param('id'));
    if (!ctx) return back('No such task.');
    const outcome = await archiveTask(ctx, c.req.param('id'));
    if (!outcome.ok) return back(outcome.message);
    return back(
      `Archived: ${outcome.value.task.title}. Archived tasks are kept; ask in Chat to restore one.`,
    );
  });
  return app;
}

function filterForm(filter: TaskListFilter) {
  const option = (value: string, label: string, selected: string | undefined) =>
    html`<option value="${value}"${value === (selected ?? '') ? html` selected` : ''}>${label}</option>`;
  return html`<form method="get" action="/tasks" class="filters" role="search" aria-label="Filter tasks">
    <label>Status <select name="status">${option('', 'any', filter.status)}${STATUS_CHOICES.map((status) =>
      option(
        status,
        status === 'open' ? 'open (to do, in progress, blocked)' : status.replace('_', ' '),
        filter.status,
      ),
    )}</select></label>
    <label>Priority <select name="priority">${option('', 'any', filter.priority)}${TASK_PRIORITIES.map((priority) => option(priority, priority, filter.priority))}</select></label>
    <label>Due <select name="due">${option('', 'any', filter.due)}${TASK_DUE_FILTERS.map((due) => option(due, DUE_LABELS[due], filter.due))}</select></label>
    <button type="submit">Filter</button>
  </form>`;
}

function taskItem(task: TaskListItem, session: WebSession, filter: TaskListFilter) {
  const open = (ACTIVE_STATUSES as readonly string[]).includes(task.status);
  // The filter rides along, so each action comes back to the same list.
  const keep = html`${csrfField(session)}${filter.status ? html`<input type="hidden" name="status" value="${filter.status}">` : ''}${filter.priority ? html`<input type="hidden" name="priority" value="${filter.priority}">` : ''}${filter.due ? html`<input type="hidden" name="due" value="${filter.due}">` : ''}`;
  return html`<li class="card task" data-task-id="${task.id}" data-status="${task.status}">
    <p class="task-title">${task.title}</p>
    <p class="meta"><span class="badge">${task.status.replace('_', ' ')}</span> · ${task.priority} priority${task.dueDate ? ` · due ${task.dueDate}` : ''}${session.owner ? ` · ${task.userId}` : ''} · updated ${formatDate(task.updatedAt)}</p>
    <div class="actions">
      ${open ? html`<form method="post" action="/tasks/${task.id}/done" class="inline">${keep}<button type="submit">Mark done</button></form>` : ''}
      <form method="post" action="/tasks/${task.id}/archive" class="inline">${keep}<button type="submit" class="secondary">Archive</button></form>
    </div>
    <details class="edit"><summary>Edit</summary>
      <form method="post" action="/tasks/${task.id}/edit" class="edit-form">${keep}
        <label>Title <input name="title" value="${task.title}" required maxlength="500"></label>
        <label>Priority <select name="priority">${TASK_PRIORITIES.map((priority) => html`<option value="${priority}"${priority === task.priority ? html` selected` : ''}>${priority}</option>`)}</select></label>
        <label>Due <input name="due_date" type="date" value="${task.dueDate ?? ''}"></label>
        <button type="submit">Save</button>
      </form>
    </details>
  </li>`;
}
