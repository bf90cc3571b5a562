import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { silentLogger } from '../src/logging/logger.ts';
import {
  createTaskHandler,
  deleteTaskHandler,
  getTasksHandler,
  searchTasksHandler,
  taskHandlers,
  updateTaskHandler,
} from '../src/skills/handlers/tasks/index.ts';
import { loadSkillRoots } from '../src/skills/registry/index.ts';
import type { SkillContext, SkillHandler, SkillResult } from '../src/skills/types.ts';
import { describeEachBackend } from './support/db.ts';
import { runHandler as run } from './support/handlers.ts';

// Tuesday 2026-03-10, 10:00 UTC = 11:00 in Berlin.
const NOW = new Date('2026-03-10T10:00:00Z');

function idOf(result: SkillResult): string {
  expect(result.status, result.content).toBe('ok');
  return String(result.metadata?.id);
}

it('exports one handler per tasks skill', () => {
  expect(taskHandlers.map((handler) => handler.name).sort()).toEqual([
    'tasks.create',
    'tasks.delete',
    'tasks.get',
    'tasks.search',
    'tasks.update',
  ]);
});

it('marks read-only and mutating skills as documented (flags are checked in skills-docs.test.ts)', () => {
  const skillsDir = fileURLToPath(new URL('../skills', import.meta.url));
  const snapshot = loadSkillRoots([{ dir: skillsDir, source: 'builtin' }]);
  expect(snapshot.skills.get('tasks.search')?.readonly).toBe(true);
  expect(snapshot.skills.get('tasks.update')?.readonly).toBe(false);
});

it('rejects bad flags at the schema, before anything runs', () => {
  const rejects = (handler: SkillHandler, raw: Record<string, unknown>) =>
    expect(handler.flags.safeParse(raw).success, JSON.stringify(raw)).toBe(false);
  rejects(createTaskHandler, {});
  rejects(createTaskHandler, { title: 'x', priority: 'urgent' });
  rejects(createTaskHandler, { title: 'x', due: '2026-02-30' });
  rejects(createTaskHandler, { title: 'x', due: '2026-13-01' });
  rejects(createTaskHandler, { title: 'x', due: 'someday' });
  rejects(createTaskHandler, { title: 'x', recurrence: 'fortnightly' });
  rejects(createTaskHandler, { title: 'x', colour: 'red' });
  rejects(searchTasksHandler, { status: 'doing' });
  rejects(searchTasksHandler, { status: ['todo', 'doing'] });
  rejects(searchTasksHandler, { priority: 'urgent' });
  rejects(searchTasksHandler, { sort: 'title' });
  rejects(searchTasksHandler, { limit: '500' });
  rejects(searchTasksHandler, { due_before: '2026-02-30' });
  rejects(getTasksHandler, { recent: 'many' });
  rejects(updateTaskHandler, { status: 'done' });
  rejects(updateTaskHandler, { id: 't_x', status: 'finished' });
  rejects(updateTaskHandler, { id: 't_x', recurrence: 'every fortnight' });
  rejects(deleteTaskHandler, {});

  const impossible = createTaskHandler.flags.safeParse({ title: 'x', due: '2026-02-30' });
  expect(impossible.error?.issues[0]?.message).toContain('2026-02-30');
  expect(impossible.error?.issues[0]?.path).toEqual(['due']);
  // Parsed values arrive as the command parser hands them over: strings, `true`, arrays.
  expect(searchTasksHandler.flags.parse({ status: 'todo,BLOCKED', limit: '5', overdue: true })).toMatchObject(
    {
      status: ['todo', 'blocked'],
      limit: 5,
      overdue: true,
    },
  );
  expect(createTaskHandler.flags.parse({ title: 'x' })).toMatchObject({ priority: 'medium' });
  expect(searchTasksHandler.flags.parse({})).toMatchObject({ limit: 20 });
});

describeEachBackend('tasks skills', (getDb) => {
  const context = (overrides: Partial<SkillContext> = {}): SkillContext => ({
    user: { id: 'local', timezone: 'Europe/Berlin' },
    conversationId: null,
    channel: 'test',
    agentId: null,
    turnId: null,
    executionId: 'exec-test',
    signal: new AbortController().signal,
    services: { database: getDb() },
    logger: silentLogger(),
    now: () => NOW,
    ...overrides,
  });

  it('creates a task and finds it by full text, showing the compact line', async () => {
    const created = await run(
      createTaskHandler,
      {
        title: 'Review quarterly budget',
        description: 'Check the travel expenses',
        priority: 'high',
        due: 'tomorrow',
        assignee: 'Bob',
        tags: ['Q1', 'finance'],
      },
      context(),
    );
    const id = idOf(created);
    expect(id).toMatch(/^t_[0-9a-z]{8}$/);
    const line = `[${id}] Review quarterly budget · todo · high · due 2026-03-11 · @Bob · #q1 #finance`;
    expect(created.content).toBe(`Created ${line}`);

    const found = await run(searchTasksHandler, { query: 'travel expense' }, context());
    expect(found.status).toBe('ok');
    expect(found.content.split('\n')).toContain(line);
    expect(found.metadata).toMatchObject({ ids: [id], count: 1, total: 1 });

    const none = await run(searchTasksHandler, { query: 'holiday' }, context());
    expect(none.content).toMatch(/^No tasks match/);
    expect(none.metadata).toMatchObject({ ids: [], count: 0 });
  });

  it('filters by status, priority, tags, due dates and overdue, and sorts', async () => {
    // A clock that moves, so creation order is a real order (ties are broken by random ids).
    let tick = 0;
    const ctx = context({ now: () => new Date(NOW.getTime() + 1000 * tick++) });
    const make = async (raw: Record<string, unknown>) =>
      idOf(await run(createTaskHandler, { tags: 'hf', ...raw }, ctx));
    const late = await make({ title: 'Late invoice', due: '2026-03-02', priority: 'low' });
    const soon = await make({ title: 'Soon', due: 'friday', priority: 'critical', tags: 'hf,client' });
    const later = await make({ title: 'Later', due: 'in 2 weeks', priority: 'high', tags: ['hf', 'client'] });
    const blocked = await make({ title: 'Blocked one' });
    idOf(await run(updateTaskHandler, { id: blocked, status: 'blocked' }, ctx));
    const done = await make({ title: 'Finished' });
    idOf(await run(updateTaskHandler, { id: done, status: 'done' }, ctx));
    const ids = async (raw: Record<string, unknown>) => {
      const result = await run(searchTasksHandler, { tags: 'hf', ...raw }, ctx);
      expect(result.status, result.content).toBe('ok');
      return result.metadata?.ids;
    };

    expect(await ids({})).toEqual([late, soon, later, blocked]);
    expect(await ids({ status: 'blocked' })).toEqual([blocked]);
    expect(await ids({ status: ['done', 'blocked'] })).toEqual([blocked, done]);
    expect(await ids({ status: 'all', sort: 'priority' })).toEqual([soon, later, blocked, done, late]);
    expect(await ids({ priority: ['high', 'critical'] })).toEqual([soon, later]);
    expect(await ids({ tags: ['hf', 'client'] })).toEqual([soon, later]);
    expect(await ids({ due_before: 'next monday' })).toEqual([late, soon]);
    expect(await ids({ due_after: 'today' })).toEqual([soon, later]);
    expect(await ids({ overdue: true })).toEqual([late]);
    expect(await ids({ status: 'overdue' })).toEqual([late]);

    const limited = await run(searchTasksHandler, { tags: 'hf', limit: '2' }, ctx);
    expect(limited.metadata).toMatchObject({ count: 2, total: 4 });
    expect(limited.content).toContain('Showing 2 of 4');
    expect(limited.content).toContain(`[${late}] Late invoice · todo · low · due 2026-03-02 (overdue) · #hf`);
  });

  it('gets full detail by id, by ids and the most recent, and needs exactly one of them', async () => {
    let tick = 0;
    const ctx = context({ now: () => new Date(Date.parse('2026-03-20T10:00:00Z') + 1000 * tick++) });
    const first = idOf(await run(createTaskHandler, { title: 'Draft agenda' }, ctx));
    const second = idOf(await run(createTaskHandler, { title: 'Send invites', depends_on: first }, ctx));
    idOf(await run(updateTaskHandler, { id: first, comment: 'Ask Anna for topics', priority: 'high' }, ctx));

    const one = await run(getTasksHandler, { id: first.toUpperCase() }, ctx);
    expect(one.status).toBe('ok');
    expect(one.content).toContain(`[${first}] Draft agenda · todo · high`);
    expect(one.content).toContain(`Blocks: [${second}] Send invites (todo)`);
    expect(one.content).toContain('user:local: Ask Anna for topics');
    expect(one.content).toContain('user:local priority: medium → high');
    expect(one.content).toContain('user:local created the task');

    const both = await run(getTasksHandler, { ids: [second, first] }, ctx);
    expect(both.metadata).toMatchObject({ ids: [second, first], count: 2 });
    expect(both.content).toContain(`Depends on: [${first}] Draft agenda (todo)`);

    const recent = await run(getTasksHandler, { recent: '1' }, ctx);
    expect(recent.metadata).toMatchObject({ ids: [first], count: 1 });

    for (const raw of [{}, { id: first, recent: '2' }, { id: first, ids: [second] }]) {
      const result = await run(getTasksHandler, raw, ctx);
      expect(result.status).toBe('error');
      expect(result.content).toContain('exactly one of --id');
    }
    const unknown = await run(getTasksHandler, { ids: [first, 't_zzzzzzzz'] }, ctx);
    expect(unknown).toMatchObject({
      status: 'error',
      content: 'No task t_zzzzzzzz. Find ids with tasks.search.',
    });
  });

  it('updates fields, records history by actor, comments, and links dependencies', async () => {
    const ctx = context({ agentId: 'a7', executionId: 'exec-42' });
    const id = idOf(
      await run(createTaskHandler, { title: 'Plan offsite', due: '2026-04-01', tags: 'team,travel' }, ctx),
    );
    const other = idOf(await run(createTaskHandler, { title: 'Book venue', depends_on: id }, ctx));

    const updated = await run(
      updateTaskHandler,
      {
        id,
        status: 'in_progress',
        due: 'none',
        add_tags: 'q2',
        remove_tags: 'travel',
        assignee: 'me',
        comment: 'Started on it',
      },
      ctx,
    );
    expect(updated.status, updated.content).toBe('ok');
    expect(updated.content).toContain(
      `Updated [${id}] Plan offsite · in_progress · medium · @local · #team #q2`,
    );
    expect(updated.content).toContain('status: todo → in_progress');
    expect(updated.content).toContain('comment added');
    expect(updated.metadata?.changed).toEqual(['status', 'due_date', 'assignee', 'tags']);

    const rows = await getDb().query<{
      field: string;
      old_value: unknown;
      new_value: unknown;
      actor: string;
    }>(
      `SELECT field, old_value, new_value, actor FROM task_history
       WHERE task_id = $1 AND execution_id = 'exec-42' AND field <> 'created' ORDER BY id`,
      [id],
    );
    expect(rows).toEqual([
      { field: 'status', old_value: 'todo', new_value: 'in_progress', actor: 'agent:a7' },
      { field: 'due_date', old_value: '2026-04-01', new_value: null, actor: 'agent:a7' },
      { field: 'assignee', old_value: null, new_value: 'local', actor: 'agent:a7' },
      { field: 'tags', old_value: ['team', 'travel'], new_value: ['team', 'q2'], actor: 'agent:a7' },
    ]);
    const comments = await getDb().query('SELECT author, body FROM task_comments WHERE task_id = $1', [id]);
    expect(comments).toEqual([{ author: 'agent:a7', body: 'Started on it' }]);

    const cycle = await run(updateTaskHandler, { id, depends_on: other }, ctx);
    expect(cycle.status).toBe('error');
    expect(cycle.content).toContain('cycle');
    const unlinked = await run(updateTaskHandler, { id: other, remove_depends_on: id }, ctx);
    expect(unlinked.content).toContain(`no longer depends on ${id}`);

    const nothing = await run(updateTaskHandler, { id }, ctx);
    expect(nothing).toMatchObject({ status: 'error', content: expect.stringContaining('Nothing to change') });
    const same = await run(updateTaskHandler, { id, status: 'in_progress' }, ctx);
    expect(same).toMatchObject({ status: 'ok', content: expect.stringContaining('Nothing changed') });
  });

  it('creates the next occurrence when a recurring task is done', async () => {
    const ctx = context();
    const id = idOf(
      await run(
        createTaskHandler,
        { title: 'Pay rent', due: '2026-03-01', recurrence: 'Monthly', tags: 'home' },
        ctx,
      ),
    );
    const done = await run(updateTaskHandler, { id, status: 'done' }, ctx);
    expect(done.status, done.content).toBe('ok');
    const nextId = String(done.metadata?.nextOccurrenceId);
    expect(done.content).toContain(
      `Next occurrence: [${nextId}] Pay rent · todo · medium · due 2026-04-01 · #home`,
    );
    const open = await run(searchTasksHandler, { query: 'rent' }, ctx);
    expect(open.metadata?.ids).toEqual([nextId]);
  });

  it('archives on delete: the row stays, search no longer shows it, update --restore brings it back', async () => {
    const ctx = context();
    const id = idOf(await run(createTaskHandler, { title: 'Old idea', tags: 'attic' }, ctx));
    const deleted = await run(deleteTaskHandler, { id }, ctx);
    expect(deleted.status).toBe('ok');
    expect(deleted.content).toContain(`Archived [${id}] Old idea`);
    expect(deleted.content).toContain(`tasks.update --id ${id} --restore`);

    const rows = await getDb().query('SELECT archived_at FROM tasks WHERE id = $1', [id]);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.archived_at).not.toBeNull();
    const search = await run(searchTasksHandler, { tags: 'attic', status: 'all' }, ctx);
    expect(search.metadata?.ids).toEqual([]);
    const get = await run(getTasksHandler, { id }, ctx);
    expect(get.content).toContain('· archived');

    const restored = await run(updateTaskHandler, { id, restore: true }, ctx);
    expect(restored.status, restored.content).toBe('ok');
    const again = await run(searchTasksHandler, { tags: 'attic' }, ctx);
    expect(again.metadata?.ids).toEqual([id]);
  });

  it('keeps one user out of another user’s tasks', async () => {
    await getDb().query("INSERT INTO users (id, timezone) VALUES ('bea', 'Asia/Tokyo')");
    const alice = context();
    const bea = context({ user: { id: 'bea', timezone: 'Asia/Tokyo' } });
    const id = idOf(await run(createTaskHandler, { title: 'Private diary', tags: 'mine' }, alice));
    const notFound = { status: 'error', content: `No task ${id}. Find ids with tasks.search.` };

    expect((await run(searchTasksHandler, { query: 'diary' }, bea)).metadata?.ids).toEqual([]);
    expect((await run(searchTasksHandler, { tags: 'mine', status: 'all' }, bea)).metadata?.ids).toEqual([]);
    expect(await run(getTasksHandler, { id }, bea)).toMatchObject(notFound);
    expect(await run(updateTaskHandler, { id, status: 'done' }, bea)).toMatchObject(notFound);
    expect(await run(updateTaskHandler, { id, comment: 'hi' }, bea)).toMatchObject(notFound);
    expect(await run(deleteTaskHandler, { id }, bea)).toMatchObject(notFound);
    expect(await run(createTaskHandler, { title: 'Mine', depends_on: id }, bea)).toMatchObject(notFound);
    expect((await run(getTasksHandler, { recent: '5' }, bea)).metadata?.ids).toEqual(
      expect.not.arrayContaining([id]),
    );

    const still = await run(getTasksHandler, { id }, alice);
    expect(still.content).toContain(`[${id}] Private diary · todo`);
    expect(still.content).not.toContain('archived');
  });
});
