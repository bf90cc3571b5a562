import { expect, it } from 'vitest';
import type { Database } from '../src/db/index.ts';
import {
  addComment,
  addDependencies,
  archiveTask,
  createTask,
  getRecentTasks,
  getTask,
  getTaskOverview,
  getTasks,
  type NewTask,
  removeDependencies,
  searchTasks,
  type Task,
  type TaskContext,
  type TaskOutcome,
  type TaskSearch,
  updateTask,
} from '../src/tasks/index.ts';
import { describeEachBackend } from './support/db.ts';

/** A clock that starts at `start` and moves one second per reading, so records keep their order. */
function tickingClock(start: string): () => Date {
  let at = Date.parse(start);
  return () => {
    at += 1000;
    return new Date(at);
  };
}

function value<T>(outcome: TaskOutcome<T>): T {
  if (!outcome.ok) throw new Error(`expected success, got ${outcome.code}: ${outcome.message}`);
  return outcome.value;
}

describeEachBackend('task store', (getDb) => {
  // Tuesday 2026-03-10 10:00 UTC (11:00 in Berlin).
  const context = (overrides: Partial<TaskContext> = {}): TaskContext => ({
    database: getDb(),
    userId: 'local',
    timezone: 'Europe/Berlin',
    actor: 'user:local',
    executionId: 'exec-1',
    now: tickingClock('2026-03-10T10:00:00Z'),
    ...overrides,
  });
  const create = async (input: NewTask, ctx = context()) => value(await createTask(ctx, input));
  const search = async (filters: TaskSearch, ctx = context()) => value(await searchTasks(ctx, filters));
  const history = (db: Database, taskId: string) =>
    db.query<{ field: string; old_value: unknown; new_value: unknown; actor: string; execution_id: string }>(
      'SELECT field, old_value, new_value, actor, execution_id FROM task_history WHERE task_id = $1 ORDER BY id',
      [taskId],
    );

  it('stores a task with a readable id, defaults and normalised tags', async () => {
    const task = await create({ title: '  Review PR  ', tags: ['Backend', '#q1', 'backend'] });
    expect(task.id).toMatch(/^t_[0-9a-hjkmnp-tv-z]{8}$/);
    expect(task).toMatchObject({
      title: 'Review PR',
      status: 'todo',
      priority: 'medium',
      dueDate: null,
      tags: ['backend', 'q1'],
      userId: 'local',
      archivedAt: null,
    });
    expect(task.createdAt).toBe('2026-03-10T10:00:01.000Z');
    const rows = await history(getDb(), task.id);
    expect(rows).toEqual([
      {
        field: 'created',
        old_value: null,
        new_value: { title: 'Review PR' },
        actor: 'user:local',
        execution_id: 'exec-1',
      },
    ]);
  });

  it('draws another id when the first one is taken', async () => {
    const ids = ['t_aaaaaaaa', 't_aaaaaaaa', 't_bbbbbbbb'];
    const randomId = () => ids.shift() ?? 't_zzzzzzzz';
    const first = await create({ title: 'First' }, context({ randomId }));
    const second = await create({ title: 'Second' }, context({ randomId }));
    expect([first.id, second.id]).toEqual(['t_aaaaaaaa', 't_bbbbbbbb']);
  });

  it('rejects what the table would not hold, and the database checks its enums too', async () => {
    const badDate = await createTask(context(), { title: 'x', dueDate: '2026-02-30' });
    expect(badDate).toMatchObject({
      ok: false,
      code: 'invalid',
      message: expect.stringContaining('2026-02-30'),
    });
    const badRule = await createTask(context(), { title: 'x', recurrence: 'fortnightly' });
    expect(badRule).toMatchObject({ ok: false, message: expect.stringContaining('every N weeks') });
    const badParent = await createTask(context(), { title: 'x', parentId: 't_nothere0' });
    expect(badParent).toEqual({
      ok: false,
      code: 'not_found',
      message: 'No task t_nothere0. Find ids with tasks.search.',
    });
    await expect(
      getDb().query(
        "INSERT INTO tasks (id, user_id, title, status) VALUES ('t_badstat', 'local', 'x', 'doing')",
      ),
    ).rejects.toThrow();
    await expect(
      getDb().query(
        "INSERT INTO tasks (id, user_id, title, priority) VALUES ('t_badprio', 'local', 'x', 'urgent')",
      ),
    ).rejects.toThrow();
  });

  it('finds tasks by full text over title and description, title matches ranked first', async () => {
    const inDescription = await create({
      title: 'Board meeting',
      description: 'Bring the marketing numbers',
      tags: ['fts'],
    });
    const inTitle = await create({ title: 'Prepare quarterly marketing report', tags: ['fts'] });
    await create({ title: 'Water the plants', tags: ['fts'] });

    const found = await search({ query: 'marketing reports' });
    expect(found.tasks.map((task) => task.id)).toEqual([inTitle.id]);
    const both = await search({ query: 'marketing' });
    expect(both.tasks.map((task) => task.id)).toEqual([inTitle.id, inDescription.id]);
    // Partial words still find titles.
    const partial = await search({ query: 'quarter' });
    expect(partial.tasks.map((task) => task.id)).toEqual([inTitle.id]);
    expect((await search({ query: 'spaceship' })).tasks).toEqual([]);
  });

  it('filters by status, priority, assignee, tags (all of them) and due range, and sorts', async () => {
    const ctx = context();
    const a = await create(
      { title: 'A', priority: 'low', dueDate: '2026-03-20', assignee: 'Bob', tags: ['flt', 'x', 'y'] },
      ctx,
    );
    const b = await create(
      { title: 'B', priority: 'critical', dueDate: '2026-03-15', tags: ['flt', 'x'] },
      ctx,
    );
    const c = await create({ title: 'C', priority: 'high', tags: ['flt', 'y'], status: 'done' }, ctx);
    const d = await create(
      { title: 'D', priority: 'high', dueDate: '2026-03-12', tags: ['flt'], status: 'blocked' },
      ctx,
    );
    const ids = async (filters: TaskSearch) =>
      (await search({ tags: ['flt'], ...filters }, ctx)).tasks.map((t) => t.id);

    expect(await ids({})).toEqual([d.id, b.id, a.id]);
    expect(await ids({ statuses: ['done'] })).toEqual([c.id]);
    expect(await ids({ statuses: ['todo', 'done'], sort: 'priority' })).toEqual([b.id, c.id, a.id]);
    expect(await ids({ priorities: ['high', 'critical'] })).toEqual([d.id, b.id]);
    expect(await ids({ assignee: 'bob' })).toEqual([a.id]);
    expect(await ids({ tags: ['flt', 'x', 'y'] })).toEqual([a.id]);
    expect(await ids({ tags: ['FLT', 'x'] })).toEqual([b.id, a.id]);
    expect(await ids({ dueBefore: '2026-03-15' })).toEqual([d.id, b.id]);
    expect(await ids({ dueAfter: '2026-03-15', dueBefore: '2026-03-20' })).toEqual([b.id, a.id]);
    expect(await ids({ sort: 'created_at' })).toEqual([d.id, b.id, a.id]);

    const limited = await search({ tags: ['flt'], limit: 2 }, ctx);
    expect(limited.tasks).toHaveLength(2);
    expect(limited.total).toBe(3);
    const badDate = await searchTasks(ctx, { dueBefore: '2026-13-01' });
    expect(badDate).toMatchObject({ ok: false, code: 'invalid' });
  });

  it('orders recently updated tasks first when sorted by updated_at', async () => {
    const ctx = context();
    const first = await create({ title: 'First', tags: ['upd'] }, ctx);
    const second = await create({ title: 'Second', tags: ['upd'] }, ctx);
    value(await updateTask(ctx, first.id, { priority: 'high' }));
    const found = await search({ tags: ['upd'], sort: 'updated_at' }, ctx);
    expect(found.tasks.map((task) => task.id)).toEqual([first.id, second.id]);
  });

  it('counts a task as overdue by the date in the user zone, and never when done', async () => {
    // 23:30 UTC on 2026-03-10 is already 2026-03-11 in Berlin.
    const lateEvening = () => new Date('2026-03-10T23:30:00Z');
    const dueTuesday = await create({ title: 'Due Tuesday', dueDate: '2026-03-10', tags: ['late'] });
    await create({ title: 'Done late', dueDate: '2026-03-01', status: 'done', tags: ['late'] });
    await create({ title: 'Due Wednesday', dueDate: '2026-03-11', tags: ['late'] });

    const inBerlin = await search({ tags: ['late'], overdue: true }, context({ now: lateEvening }));
    expect(inBerlin.tasks.map((task) => task.id)).toEqual([dueTuesday.id]);
    const inUtc = await search(
      { tags: ['late'], overdue: true },
      context({ now: lateEvening, timezone: 'UTC' }),
    );
    expect(inUtc.tasks).toEqual([]);
    const allStatuses = await search(
      { tags: ['late'], overdue: true, statuses: ['todo', 'done'] },
      context({ now: lateEvening }),
    );
    expect(allStatuses.tasks.map((task) => task.id)).toEqual([dueTuesday.id]);
  });

  it('writes one history row per changed field with old and new values, in the update', async () => {
    const task = await create({
      title: 'Ship v2',
      priority: 'medium',
      tags: ['release'],
      dueDate: '2026-03-20',
    });
    const agent = context({ actor: 'agent:planner', executionId: 'exec-7' });
    const updated = value(
      await updateTask(agent, task.id, {
        status: 'in_progress',
        priority: 'high',
        addTags: ['urgent'],
        dueDate: null,
        title: 'Ship v2',
      }),
    );
    expect(updated.changes.map((change) => change.field)).toEqual(['status', 'priority', 'due_date', 'tags']);
    expect(updated.task).toMatchObject({
      status: 'in_progress',
      priority: 'high',
      dueDate: null,
      tags: ['release', 'urgent'],
    });
    const rows = (await history(getDb(), task.id)).filter((row) => row.field !== 'created');
    expect(rows).toEqual([
      {
        field: 'status',
        old_value: 'todo',
        new_value: 'in_progress',
        actor: 'agent:planner',
        execution_id: 'exec-7',
      },
      {
        field: 'priority',
        old_value: 'medium',
        new_value: 'high',
        actor: 'agent:planner',
        execution_id: 'exec-7',
      },
      {
        field: 'due_date',
        old_value: '2026-03-20',
        new_value: null,
        actor: 'agent:planner',
        execution_id: 'exec-7',
      },
      {
        field: 'tags',
        old_value: ['release'],
        new_value: ['release', 'urgent'],
        actor: 'agent:planner',
        execution_id: 'exec-7',
      },
    ]);

    const again = value(await updateTask(agent, task.id, { status: 'in_progress', priority: 'high' }));
    expect(again.changes).toEqual([]);
    expect(await history(getDb(), task.id)).toHaveLength(5);
  });

  it('sets completed_at on done and clears it on reopening', async () => {
    const task = await create({ title: 'Finish' });
    const done = value(await updateTask(context(), task.id, { status: 'done' }));
    expect(done.task.completedAt).not.toBeNull();
    const reopened = value(await updateTask(context(), task.id, { status: 'todo' }));
    expect(reopened.task.completedAt).toBeNull();
  });

  it('rolls the whole update back when part of it fails', async () => {
    const task = await create({ title: 'Atomic' });
    const failed = await updateTask(context(), task.id, { status: 'done', addDependsOn: ['t_missing0'] });
    expect(failed).toEqual({
      ok: false,
      code: 'not_found',
      message: 'No task t_missing0. Find ids with tasks.search.',
    });
    expect(value(await getTask(context(), task.id)).status).toBe('todo');
    expect((await history(getDb(), task.id)).map((row) => row.field)).toEqual(['created']);
  });

  it('adds comments by the acting user or agent', async () => {
    const task = await create({ title: 'Discuss' });
    value(await addComment(context(), task.id, 'First thought'));
    value(await addComment(context({ actor: 'agent:a1' }), task.id, 'Agent note'));
    expect(await addComment(context(), task.id, '   ')).toMatchObject({ ok: false, code: 'invalid' });
    const [detail] = value(await getTasks(context(), [task.id]));
    expect(detail?.comments.map((comment) => [comment.author, comment.body])).toEqual([
      ['user:local', 'First thought'],
      ['agent:a1', 'Agent note'],
    ]);
  });

  it('links dependencies, rejects cycles, self-links and unknown tasks, and unlinks', async () => {
    const ctx = context();
    const a = await create({ title: 'A' }, ctx);
    const b = await create({ title: 'B', dependsOn: [a.id] }, ctx);
    const c = await create({ title: 'C' }, ctx);
    value(await addDependencies(ctx, c.id, [b.id]));

    const cycle = await addDependencies(ctx, a.id, [c.id]);
    expect(cycle).toMatchObject({ ok: false, code: 'cycle', message: expect.stringContaining('cycle') });
    expect(await addDependencies(ctx, a.id, [a.id])).toMatchObject({ ok: false, code: 'cycle' });
    expect(await addDependencies(ctx, a.id, ['t_unknown1'])).toEqual({
      ok: false,
      code: 'not_found',
      message: 'No task t_unknown1. Find ids with tasks.search.',
    });

    const [detailB] = value(await getTasks(ctx, [b.id]));
    expect(detailB?.dependsOn.map((link) => link.id)).toEqual([a.id]);
    expect(detailB?.blocks.map((link) => link.id)).toEqual([c.id]);

    const removed = value(await removeDependencies(ctx, c.id, [b.id]));
    expect(removed).toMatchObject({ removed: [b.id], dependsOn: [] });
    // With c no longer depending on b, a may now depend on c.
    value(await addDependencies(ctx, a.id, [c.id]));
    const rows = (await history(getDb(), c.id)).filter((row) => row.field === 'depends_on');
    expect(rows.map((row) => [row.old_value, row.new_value])).toEqual([
      [[], [b.id]],
      [[b.id], []],
    ]);
  });

  it('creates the next occurrence once when a recurring task is completed', async () => {
    // Today in Berlin: 2026-03-10. Due last Friday, weekly: next is this Friday, not last-Friday + 7 days ago.
    const ctx = context();
    const parent = await create({ title: 'Parent' }, ctx);
    const task = await create(
      {
        title: 'Weekly report',
        description: 'Send numbers',
        priority: 'high',
        dueDate: '2026-03-06',
        assignee: 'me',
        tags: ['ops'],
        parentId: parent.id,
        recurrence: 'weekly',
      },
      ctx,
    );
    const done = value(await updateTask(ctx, task.id, { status: 'done' }));
    const next = done.nextOccurrence;
    expect(next).not.toBeNull();
    expect(next).toMatchObject({
      title: 'Weekly report',
      description: 'Send numbers',
      priority: 'high',
      assignee: 'me',
      tags: ['ops'],
      parentId: parent.id,
      recurrence: 'weekly',
      status: 'todo',
      dueDate: '2026-03-13',
    });
    const fields = (await history(getDb(), task.id)).map((row) => [row.field, row.new_value]);
    expect(fields).toContainEqual(['next_occurrence', next?.id]);
    const nextHistory = await history(getDb(), next?.id ?? '');
    expect(nextHistory[0]?.new_value).toEqual({ title: 'Weekly report', previousOccurrence: task.id });

    // Reopening and completing again does not make a second occurrence.
    value(await updateTask(ctx, task.id, { status: 'todo' }));
    const again = value(await updateTask(ctx, task.id, { status: 'done' }));
    expect(again.nextOccurrence).toBeNull();
    const copies = await search({ query: 'Weekly report', statuses: ['todo', 'done'] }, ctx);
    expect(copies.total).toBe(2);

    // A plain task makes no occurrence.
    const plain = await create({ title: 'Once' }, ctx);
    expect(value(await updateTask(ctx, plain.id, { status: 'done' })).nextOccurrence).toBeNull();
  });

  it('validates recurrence rules on update and can clear them', async () => {
    const task = await create({ title: 'Rule' });
    const bad = await updateTask(context(), task.id, { recurrence: 'every fortnight' });
    expect(bad).toMatchObject({
      ok: false,
      code: 'invalid',
      message: expect.stringContaining('daily, weekdays'),
    });
    const set = value(await updateTask(context(), task.id, { recurrence: 'Every 2 Weeks' }));
    expect(set.task.recurrence).toBe('every 2 weeks');
    const cleared = value(await updateTask(context(), task.id, { recurrence: null }));
    expect(cleared.task.recurrence).toBeNull();
  });

  it('archives instead of deleting, hides archived tasks from search, and restores them', async () => {
    const ctx = context();
    const task = await create({ title: 'Obsolete plan', tags: ['arch'] }, ctx);
    const archived = value(await archiveTask(ctx, task.id));
    expect(archived.alreadyArchived).toBe(false);
    expect(archived.task.archivedAt).not.toBeNull();
    expect(value(await archiveTask(ctx, task.id)).alreadyArchived).toBe(true);

    const rows = await getDb().query('SELECT id, archived_at FROM tasks WHERE id = $1', [task.id]);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.archived_at).not.toBeNull();
    expect((await search({ tags: ['arch'], statuses: ['todo', 'done', 'cancelled'] }, ctx)).tasks).toEqual(
      [],
    );
    expect((await search({ query: 'Obsolete' }, ctx)).tasks).toEqual([]);
    expect((await getRecentTasks(ctx, 50)).map((recent) => recent.id)).not.toContain(task.id);
    expect(value(await getTask(ctx, task.id)).archivedAt).not.toBeNull();

    const blocked = await updateTask(ctx, task.id, { status: 'done' });
    expect(blocked).toMatchObject({
      ok: false,
      code: 'archived',
      message: expect.stringContaining('--restore'),
    });
    const restored = value(await updateTask(ctx, task.id, { restore: true }));
    expect(restored.task.archivedAt).toBeNull();
    expect(restored.changes.map((change) => change.field)).toEqual(['archived_at']);
    expect((await search({ tags: ['arch'] }, ctx)).tasks.map((found) => found.id)).toEqual([task.id]);
  });

  it('lists recent tasks in full detail, newest first', async () => {
    // Later than every other test's clock, so these are the most recent tasks in the database.
    const ctx = context({ now: tickingClock('2026-04-01T00:00:00Z') });
    const older = await create({ title: 'Older' }, ctx);
    const newer = await create({ title: 'Newer' }, ctx);
    value(await addComment(ctx, older.id, 'bump'));
    const recent = await getRecentTasks(ctx, 2);
    expect(recent.map((task) => task.id)).toEqual([older.id, newer.id]);
    expect(recent[0]?.comments).toHaveLength(1);
    expect(recent[0]?.history[0]?.field).toBe('created');
  });

  it('summarises open work for the conversation context', async () => {
    const ctx = context({ userId: 'overview', actor: 'user:overview' });
    await getDb().query("INSERT INTO users (id, timezone) VALUES ('overview', 'Europe/Berlin')");
    await create({ title: 'Late', dueDate: '2026-03-01' }, ctx);
    await create({ title: 'Today', dueDate: '2026-03-10', priority: 'critical' }, ctx);
    await create({ title: 'Closed', dueDate: '2026-03-01', status: 'done' }, ctx);
    await create({ title: 'Someday' }, ctx);
    const overview = await getTaskOverview(ctx, 2);
    expect(overview).toMatchObject({ open: 3, overdue: 1, dueToday: 1 });
    expect(overview.next.map((task) => task.title)).toEqual(['Late', 'Today']);
  });

  it('never lets one user see or change another user’s tasks', async () => {
    await getDb().query("INSERT INTO users (id, timezone) VALUES ('bob', 'America/New_York')");
    const alice = context();
    const bob = context({ userId: 'bob', actor: 'user:bob', timezone: 'America/New_York' });
    const secret: Task = await create({ title: 'Alice secret plan', tags: ['private'] }, alice);
    const bobs = await create({ title: 'Bob errand' }, bob);
    const notFound = {
      ok: false,
      code: 'not_found',
      message: `No task ${secret.id}. Find ids with tasks.search.`,
    };

    expect((await search({ query: 'secret plan' }, bob)).tasks).toEqual([]);
    expect((await search({ tags: ['private'] }, bob)).tasks).toEqual([]);
    expect(await getTask(bob, secret.id)).toEqual(notFound);
    expect(await getTasks(bob, [bobs.id, secret.id])).toEqual(notFound);
    expect(await updateTask(bob, secret.id, { status: 'done' })).toEqual(notFound);
    expect(await archiveTask(bob, secret.id)).toEqual(notFound);
    expect(await addComment(bob, secret.id, 'peek')).toEqual(notFound);
    expect(await addDependencies(bob, bobs.id, [secret.id])).toEqual(notFound);
    expect(await createTask(bob, { title: 'Sub', parentId: secret.id })).toEqual(notFound);
    expect((await getRecentTasks(bob, 50)).map((task) => task.id)).toEqual([bobs.id]);

    const untouched = value(await getTask(alice, secret.id));
    expect(untouched).toMatchObject({ status: 'todo', archivedAt: null });
    const comments = await getDb().query('SELECT 1 FROM task_comments WHERE task_id = $1', [secret.id]);
    expect(comments).toEqual([]);
  });
});
