import { converse, type TurnEngine, type TurnOutcome, turnOutcome } from '../agents/index.ts';
import type { Database } from '../db/index.ts';
import { errorMessage } from '../errors.ts';
import type { Logger } from '../logging/index.ts';
import { checkSkillMentions, type SkillSnapshot, skillsVisibleTo } from '../skills/index.ts';
import { formatInZone } from '../time/index.ts';
import { claimRun, finishRun, type RunTrigger, runAt, type WorkflowRun } from './run-store.ts';

/** channels' deliver(): `source` says what is delivered; its answer's `deliveryId` names the receipt. */
export type WorkflowDeliver = (
  userId: string,
  text: string,
  options?: { source?: 'workflow' | 'reminder' | 'notice' },
) => Promise<unknown>;

/** The receipt's id in deliver()'s answer, if it has one. */
function deliveryIdOf(answer: unknown): string | null {
  const id = (answer as { deliveryId?: unknown } | null | undefined)?.deliveryId;
  return typeof id === 'string' ? id : null;
}

/** The conversation (channel) scheduled runs happen in, one per user. */
export const SCHEDULED_CHANNEL = 'scheduled';

/** A run not finished after this long is taken as interrupted when its job comes back. */
export const RUN_EXPIRY_SECONDS = 3600;

export type RunnerDeps = {
  database: Database;
  skills: () => SkillSnapshot;
  engine: Pick<TurnEngine, 'handle'>;
  /**
   * Sends text to the user's primary channel (or their conversation), as channels' deliver():
   * its `deliveryId` names the receipt the outbox settles. Throws when it cannot even queue it.
   */
  deliver: WorkflowDeliver;
  /** Told when a run ends failed or undelivered (the owner's alert). Must not throw. */
  onRunFailed?: (failure: { workflow: string; userId: string; error: string }) => void;
  logger: Logger;
  now: () => Date;
};

export type RunRequest = {
  userId: string;
  skill: string;
  scheduledFor: Date;
  trigger: RunTrigger;
  timezone: string;
  jobId?: string | null;
};

/**
 * Runs one scheduled time of a workflow, exactly once: claims it (a second claim of the same
 * time, here or on another instance, does nothing), runs the page as a sub-agent's mission in
 * the user's scheduled conversation, delivers the final text and records the run.
 * Returns the run as recorded, or null when another claim ran it. Never throws for failed runs.
 */
export async function runWorkflow(deps: RunnerDeps, request: RunRequest): Promise<WorkflowRun | null> {
  const { database } = deps;
  const name = request.skill.slice(request.skill.indexOf('.') + 1);
  const run = await claimRun(database, {
    userId: request.userId,
    skill: request.skill,
    scheduledFor: request.scheduledFor,
    trigger: request.trigger,
    status: 'running',
    startedAt: deps.now(),
    jobId: request.jobId ?? null,
  });
  if (!run) return settleInterrupted(deps, request, name);

  // The run acts as request.userId: another user's workflow is as absent as a deleted one.
  const visible = skillsVisibleTo(deps.skills(), request.userId);
  const skill = visible.skills.get(request.skill);
  if (!skill) {
    return finish(deps, run, {
      status: 'failed',
      error: `${request.skill} no longer exists`,
      message: `Workflow ${name} could not run: its page ${request.skill} no longer exists.`,
    });
  }
  const skills = checkSkillMentions(skill.body, visible).known.filter((used) => used !== skill.name);
  const when = formatInZone(request.scheduledFor, request.timezone);
  let outcome: TurnOutcome;
  try {
    outcome = await turnOutcome(
      await converse(deps, {
        userId: request.userId,
        surface: SCHEDULED_CHANNEL,
        text: `Run the workflow ${skill.name} (${request.trigger === 'manual' ? 'run now' : `scheduled for ${when}`}).`,
        options: { mission: { text: skill.body, skills, agentId: name } },
      }),
    );
  } catch (error) {
    return finish(deps, run, {
      status: 'failed',
      error: errorMessage(error),
      message: `Workflow ${name} failed: ${errorMessage(error)}`,
    });
  }
  if (outcome.status === 'completed') {
    return finish(deps, run, {
      status: 'ok',
      turnId: outcome.turnId,
      costUsd: outcome.usage.cost,
      message: outcome.reply,
    });
  }
  const waiting = outcome.status === 'paused';
  return finish(deps, run, {
    status: 'failed',
    turnId: outcome.turnId,
    costUsd: outcome.usage.cost,
    error: waiting ? `stopped (${outcome.status}): ${outcome.reply}` : outcome.reply,
    message: waiting
      ? `Workflow ${name} stopped: ${outcome.reply}`
      : `Workflow ${name} failed: ${outcome.reply}`,
  });
}

async function finish(
  deps: RunnerDeps,
  run: WorkflowRun,
  end: {
    status: 'ok' | 'failed';
    message: string;
    turnId?: string;
    costUsd?: number;
    error?: string;
  },
): Promise<WorkflowRun> {
  let status: 'ok' | 'failed' | 'delivery_failed' = end.status;
  let error = end.error ?? null;
  let deliveryId: string | null = null;
  try {
    // Only queued here: whether it arrived is the delivery's receipt, settled by the outbox.
    deliveryId = deliveryIdOf(await deps.deliver(run.userId, end.message, { source: 'workflow' }));
  } catch (failure) {
    status = 'delivery_failed';
    error = `${error ? `${error}; ` : ''}delivery failed: ${errorMessage(failure)}`;
    deps.logger.warn(
      { skill: run.skill, userId: run.userId, err: errorMessage(failure) },
      'workflow result not delivered',
    );
  }
  await finishRun(deps.database, run.id, {
    status,
    finishedAt: deps.now(),
    turnId: end.turnId ?? null,
    costUsd: end.costUsd ?? 0,
    error,
    deliveryId,
  });
  deps.logger.info(
    { skill: run.skill, userId: run.userId, status, turnId: end.turnId },
    'workflow run finished',
  );
  if (status !== 'ok') {
    deps.onRunFailed?.({ workflow: run.skill, userId: run.userId, error: error ?? status });
  }
  return (await runAt(deps.database, run))!;
}

/**
 * The scheduled time was claimed before. A run left `running` by this same job (a retry after
 * a crash) or older than the expiry was interrupted: it is recorded as failed and the user told,
 * never run a second time.
 */
async function settleInterrupted(
  deps: RunnerDeps,
  request: RunRequest,
  name: string,
): Promise<WorkflowRun | null> {
  const existing = await runAt(deps.database, request);
  if (existing?.status !== 'running') return null;
  const startedAt = existing.startedAt?.getTime() ?? 0;
  const sameJob = request.jobId != null && existing.jobId === request.jobId;
  if (!sameJob && deps.now().getTime() - startedAt < RUN_EXPIRY_SECONDS * 1000) return null;
  return finish(deps, existing, {
    status: 'failed',
    error: 'interrupted: Steward stopped during the run',
    message: `Workflow ${name} was interrupted (Steward stopped while it ran) and was not run again.`,
  });
}
