import { z } from 'zod';
import { flag } from '../../flags.ts';
import { defineHandler, fail, ok } from '../../types.ts';
import { actorOf, learnedSkillsToChange } from './learned-of.ts';

/** skills.retire: stops loading one of the user's learned skills; its page and history are kept. */
export const retireSkillHandler = defineHandler({
  name: 'skills.retire',
  flags: z.object({ name: flag.string(), reason: flag.string() }).strict(),
  async execute(flags, ctx) {
    const learned = learnedSkillsToChange(ctx, 'skills.retire');
    if ('problem' in learned) return fail(learned.problem);
    const change = await learned.retire(actorOf(ctx), flags);
    if (!change.ok) return fail(change.problem);
    const restore = change.version.version - 1;
    return ok(
      `Retired ${flags.name} (version ${change.version.version}): it no longer runs. Its history is kept; steward skills rollback ${flags.name} --to ${restore} restores it.`,
      {
        sideEffects: [`moved ${learned.file(flags.name)} to ${change.file}`],
        metadata: { skill: flags.name, version: change.version.version },
      },
    );
  },
});
