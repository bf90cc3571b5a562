import type { LearnedSkills } from '../../learned/index.ts';
import { type LearnedActor, learnedSkillsFor, STEWARD_AUTHOR } from '../../learned/index.ts';
import { fail, type SkillContext, type SkillResult } from '../../types.ts';

/** The channel of scheduled workflow runs (workflows/workflow-runner.ts): no user is there. */
const UNATTENDED_CHANNEL = 'scheduled';

/** The learned skills of the running Steward, or null when it has no user skills directory. */
export function learnedSkillsOf(ctx: SkillContext): LearnedSkills | null {
  return learnedSkillsFor(ctx.services);
}

/** Who makes the change: Steward when an agent runs the skill, else the user's own command. */
export function actorOf(ctx: SkillContext): LearnedActor {
  return {
    userId: ctx.user.id,
    author: ctx.agentId !== null ? STEWARD_AUTHOR : ctx.user.id,
    turnId: ctx.turnId,
    at: ctx.now(),
  };
}

/**
 * Skills change only with the user's OK in a conversation (the sentinel checks that); a
 * scheduled run has nobody to ask, so it never changes them.
 */
export function unattendedProblem(ctx: SkillContext, skill: string): string | null {
  return ctx.channel === UNATTENDED_CHANNEL
    ? `${skill} does not run in scheduled workflows: skills change only with the user's OK in a conversation. Tell the user what you would change instead.`
    : null;
}

/**
 * The learned skills `skill` may change now, or why it may not: no user skills directory, or a
 * scheduled run (see unattendedProblem).
 */
export function learnedSkillsToChange(ctx: SkillContext, skill: string): LearnedSkills | { problem: string } {
  const learned = learnedSkillsOf(ctx);
  if (!learned) return { problem: `${skill} needs the skills directory of a running Steward.` };
  const unattended = unattendedProblem(ctx, skill);
  return unattended ? { problem: unattended } : learned;
}

/** A refused change as the model reads it: the problem, and what was found risky (as metadata). */
export function refusedChange(change: { problem: string; findings?: string[] }): SkillResult {
  return fail(change.problem, change.findings ? { metadata: { findings: change.findings } } : {});
}
