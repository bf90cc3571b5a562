import type { Queryable } from '../db/index.ts';
import { errorMessage } from '../errors.ts';
import type { Logger } from '../logging/index.ts';
import { activeTasksDueBy, addDays, type DueTask } from '../tasks/index.ts';
import { zonedToInstant } from '../time/index.ts';
import { getUser } from '../users/index.ts';
import type { WorkflowDeliver } from './workflow-runner.ts';

export type ReminderSettings = {
  enabled: boolean;
  /** The local time a task due on a date counts as due ("HH:MM"). */
  dueTime: string;
  /** How long before that the reminder goes out, in minutes. */
  leadMinutes: number;
};

export type ReminderDeps = {
  database: Queryable;
  deliver: WorkflowDeliver;
  logger: Logger;
};

/** A reminder whose time passed longer ago than this is not sent (an old overdue task, a long outage). */
const STALE_MS = 24 * 3600_000;
const MINUTE = 60_000;

/** The instant of `date` at `time` (HH:MM) local in `zone`. */
function localInstant(date: string, time: string, zone: string): number {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  const [hour, minute] = time.split(':').map(Number) as [number, number];
  return zonedToInstant({ year, month, day, hour, minute }, zone).getTime();
}

/**
 * Sends each user one message listing their tasks whose reminder time (the due date at
 * `dueTime` local, minus the lead time) has come, each task and due date once (claimed in
 * `task_reminders`, so several instances send it once). Returns how many tasks were reminded.
 */
export async function sendTaskReminders(
  deps: ReminderDeps,
  settings: ReminderSettings,
  now: Date,
): Promise<number> {
  if (!settings.enabled) return 0;
  const horizon = addDays(now.toISOString().slice(0, 10), 2 + Math.ceil(settings.leadMinutes / 1440));
  const due = await activeTasksDueBy(deps.database, horizon);
  const byUser = new Map<string, DueTask[]>();
  for (const task of due) byUser.set(task.userId, [...(byUser.get(task.userId) ?? []), task]);
  let sent = 0;
  for (const [userId, tasks] of byUser) {
    const zone = (await getUser(deps.database, userId))?.timezone ?? 'UTC';
    const ready = tasks.filter((task) => {
      const remindAt = localInstant(task.dueDate, settings.dueTime, zone) - settings.leadMinutes * MINUTE;
      return now.getTime() >= remindAt && now.getTime() - remindAt < STALE_MS;
    });
    const claimed: DueTask[] = [];
    for (const task of ready) {
      const rows = await deps.database.query(
        `INSERT INTO task_reminders (task_id, due_date, user_id, sent_at) VALUES ($1, $2::date, $3, $4)
         ON CONFLICT (task_id, due_date) DO NOTHING RETURNING task_id`,
        [task.id, task.dueDate, userId, now.toISOString()],
      );
      if (rows.length > 0) claimed.push(task);
    }
    if (claimed.length === 0) continue;
    const lines = claimed.map((task) => `- ${task.title} [${task.id}] — due ${task.dueDate}`);
    const text = `Reminder: ${claimed.length === 1 ? 'a task is' : `${claimed.length} tasks are`} due:\n${lines.join('\n')}`;
    try {
      await deps.deliver(userId, text, { source: 'reminder' });
      sent += claimed.length;
    } catch (error) {
      deps.logger.warn({ userId, err: errorMessage(error) }, 'task reminder not delivered');
    }
  }
  return sent;
}
