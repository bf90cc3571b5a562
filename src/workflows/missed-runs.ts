import type { Queryable } from '../db/index.ts';
import { errorMessage } from '../errors.ts';
import type { Logger } from '../logging/index.ts';
import { formatInZone } from '../time/index.ts';
import { claimRun } from './run-store.ts';

type MissedRunDeps = {
  database: Queryable;
  logger: Logger;
  /** Tells the schedule's owner (outside any turn). */
  notify: (userId: string, text: string) => Promise<unknown>;
};

/** What a missed run is recorded and told by. */
type MissedSchedule = {
  userId: string;
  skill: { name: string; action: string };
  timezone: string;
  catchUpSeconds: number;
};

/** Records missed times (once, whichever instance gets there first) and tells the owner. Returns how many it recorded. */
export async function recordMissed(
  deps: MissedRunDeps,
  schedule: MissedSchedule,
  times: number[],
  now: Date,
): Promise<number> {
  if (times.length === 0) return 0;
  const recorded: number[] = [];
  for (const time of times) {
    const claimed = await claimRun(deps.database, {
      userId: schedule.userId,
      skill: schedule.skill.name,
      scheduledFor: new Date(time),
      trigger: 'schedule',
      status: 'missed',
      startedAt: now,
      error:
        schedule.catchUpSeconds === 0
          ? 'missed while Steward was not running (catch_up is 0)'
          : `missed while Steward was not running, more than ${describeSeconds(schedule.catchUpSeconds)} ago`,
    });
    if (claimed) recorded.push(time);
  }
  if (recorded.length === 0) return 0;
  const name = schedule.skill.action;
  const shown = recorded.slice(-5).map((time) => formatInZone(time, schedule.timezone));
  const more = recorded.length > shown.length ? ` and ${recorded.length - shown.length} earlier` : '';
  const why =
    schedule.catchUpSeconds === 0
      ? 'Its catch_up is 0, so missed runs are skipped.'
      : `It is run on start only when less than ${describeSeconds(schedule.catchUpSeconds)} late (catch_up).`;
  const text = `Missed: workflow ${name} was due at ${shown.join(', ')}${more} while Steward was not running, and did not run. ${why}`;
  await deps
    .notify(schedule.userId, text)
    .catch((error) =>
      deps.logger.warn(
        { err: errorMessage(error), skill: schedule.skill.name },
        'could not tell of a missed run',
      ),
    );
  deps.logger.warn(
    { skill: schedule.skill.name, userId: schedule.userId, missed: recorded.length },
    'scheduled runs missed',
  );
  return recorded.length;
}

function describeSeconds(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}
