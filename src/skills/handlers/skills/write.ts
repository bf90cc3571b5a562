import { z } from 'zod';
import { flag } from '../../flags.ts';
import { defineHandler, fail, ok } from '../../types.ts';
import { actorOf, learnedSkillsToChange, refusedChange } from './learned-of.ts';

/**
 * skills.write: saves a procedure as a learned skill — a read-only template page owned by the
 * user, version 1 of its history. Refuses a built-in's name, another user's, an invalid page,
 * and a page with dangerous findings (sending data away, credentials, hiding actions).
 */
export const writeSkillHandler = defineHandler({
  name: 'skills.write',
  flags: z
    .object({
      name: flag.string(),
      description: flag.string(),
      body: flag.string(),
      reason: flag.string().optional(),
    })
    .strict(),
  async execute(flags, ctx) {
    const learned = learnedSkillsToChange(ctx, 'skills.write');
    if ('problem' in learned) return fail(learned.problem);
    const change = await learned.write(actorOf(ctx), flags);
    if (!change.ok) return refusedChange(change);
    return ok(
      `Saved ${flags.name} (version ${change.version.version}). It is yours only: running ${flags.name} returns its instructions to follow; change it with skills.update, undo with steward skills rollback.`,
      {
        sideEffects: [`wrote ${change.file}`],
        metadata: {
          skill: flags.name,
          version: change.version.version,
          path: change.file,
          owner: ctx.user.id,
        },
      },
    );
  },
});
