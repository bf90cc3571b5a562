import { z } from 'zod';
import { flag } from '../../flags.ts';
import { defineHandler, fail, ok } from '../../types.ts';
import { actorOf, learnedSkillsToChange, refusedChange } from './learned-of.ts';

/** skills.update: a new version of one of the user's learned skills, with the reason for it. */
export const updateSkillHandler = defineHandler({
  name: 'skills.update',
  flags: z
    .object({
      name: flag.string(),
      description: flag.string().optional(),
      body: flag.string().optional(),
      reason: flag.string(),
    })
    .strict(),
  async execute(flags, ctx) {
    const learned = learnedSkillsToChange(ctx, 'skills.update');
    if ('problem' in learned) return fail(learned.problem);
    const change = await learned.update(actorOf(ctx), flags);
    if (!change.ok) return refusedChange(change);
    return ok(
      `Updated ${flags.name} to version ${change.version.version} (${flags.reason}). Changes:\n${change.version.diff}`,
      {
        sideEffects: [`wrote ${change.file}`],
        metadata: { skill: flags.name, version: change.version.version, path: change.file },
      },
    );
  },
});
