import type { WebAccess } from '../../../integrations/index.ts';
import { fail, type SkillContext, type SkillResult } from '../../types.ts';

/** The web service; its absence is a wiring bug, not a user error. */
export function webOf(ctx: SkillContext): WebAccess {
  const web = ctx.services.web;
  if (!web) throw new Error('the web service is not wired into the skill services');
  return web;
}

/** The daily budget is spent: say so, and when it starts again. */
export function budgetSpent(budget: { used: number; limit: number }): SkillResult {
  return fail(
    `Not done: the daily budget of web calls is used up (${budget.used} of ${budget.limit} today, limits.web_calls_per_user_per_day); it starts again at 00:00 UTC. Tell the user, and answer from what you already have.`,
    { metadata: { budget: 'spent', used: budget.used, limit: budget.limit } },
  );
}

/**
 * The fence source for a web address: `web:URL`, the URL normalised (so it carries no space,
 * quote or angle bracket) and at most 200 characters.
 */
export function webSource(url: string): string {
  let href: string;
  try {
    href = new URL(url).href;
  } catch {
    href = encodeURI(url);
  }
  return `web:${href.length > 200 ? `${href.slice(0, 199)}…` : href}`;
}
