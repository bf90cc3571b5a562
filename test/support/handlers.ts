import type { SkillContext, SkillHandler, SkillResult } from '../../src/skills/types.ts';

/** Runs a handler the way the executor does: raw parsed flags through the zod schema, then execute. */
export function runHandler(
  handler: SkillHandler,
  raw: Record<string, unknown>,
  ctx: SkillContext,
): Promise<SkillResult> {
  return handler.execute(handler.flags.parse(raw), ctx);
}
