import type { ConverseDeps, TurnHub } from '../../agents/index.ts';
import type { ChannelStatus, PairingApproval, PairingRequest } from '../../channels/index.ts';
import type { Database } from '../../db/index.ts';
import type { LearnedSkills, SkillExecutor, SkillSnapshot } from '../../skills/index.ts';
import type { RunWithDelivery, ScheduleView } from '../../workflows/index.ts';
import type { WebSession } from '../sessions.ts';

export type PageDeps = ConverseDeps & {
  database: Database;
  turnEvents: TurnHub;
  skills: () => SkillSnapshot;
  breakers: () => Promise<Array<{ skill: string; state: string }>>;
  channels?: {
    status(): Promise<ChannelStatus[]>;
    approvePairing(code: string, options?: { as?: string }): Promise<PairingApproval>;
    pending(): Promise<PairingRequest[]>;
  };
  /** The workflow scheduler (fields as `steward schedules --json` prints them). */
  schedules?: {
    list(userId?: string): Promise<ScheduleRow[]>;
    runNow(name: string, userId?: string): Promise<unknown>;
    setPaused(
      name: string,
      userId: string,
      paused: boolean,
    ): Promise<{ skill: string } | { problem: string }>;
    runs(skill: string, userId: string, limit?: number): Promise<RunWithDelivery[]>;
  };
  /** Runs a skill command as a user, as `steward run` does (the dashboard's workflow.build). */
  executor?: Pick<SkillExecutor, 'execute'>;
  /** Re-reads the skill files and brings the schedules up to date (after the dashboard wrote one). */
  reloadSkills?: () => Promise<unknown>;
  /** Learned skills: their history and rollback on the Skills page (absent: not shown). */
  learned?: LearnedSkills;
  /** The server's log file (`<data dir>/logs/steward.log`), tailed on the owner's Logs page; absent: none kept. */
  logFile?: string;
  now?: () => Date;
};

/** A schedule as the dashboard lists it: `steward schedules --json`'s row. */
export type ScheduleRow = ScheduleView;

/** Whose data a session sees: its own user's, or everyone's (null) for the owner. */
export const scope = (session: WebSession): string | null => (session.owner ? null : session.userId);

/** The text fields of a posted form; files and an unreadable body give none. */
export async function formOf(c: {
  req: { parseBody(): Promise<Record<string, unknown>> };
}): Promise<Record<string, string>> {
  const body = await c.req.parseBody().catch(() => ({}));
  return Object.fromEntries(
    Object.entries(body).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}
