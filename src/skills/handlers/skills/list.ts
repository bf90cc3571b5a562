import { z } from 'zod';
import { formatInZone } from '../../../time/index.ts';
import { flag } from '../../flags.ts';
import type { LearnedSkillView } from '../../learned/index.ts';
import { defineHandler, fail, ok } from '../../types.ts';
import { learnedSkillsOf } from './learned-of.ts';

/**
 * skills.list: the user's learned skills with their use (runs, failures, last used); with
 * `--review`, only those to review — unused for 60 days, or failing often since their last
 * change — each with why. Read-only: nothing is retired or deleted here.
 */
export const listSkillsHandler = defineHandler({
  name: 'skills.list',
  flags: z.object({ review: flag.bool().optional() }).strict(),
  async execute(flags, ctx) {
    const learned = learnedSkillsOf(ctx);
    if (!learned) return fail('skills.list needs the skills directory of a running Steward.');
    const all = await learned.list(ctx.user.id, ctx.now());
    const shown = flags.review ? all.filter((skill) => skill.review.length > 0) : all;
    const day = (date: Date) => formatInZone(date, ctx.user.timezone).slice(0, 10);
    const line = (skill: LearnedSkillView) =>
      `- ${skill.name} (version ${skill.version}) — ${skill.description} · ${skill.runs} run${skill.runs === 1 ? '' : 's'}, ${skill.failures} failed · last used ${skill.lastUsed ? day(skill.lastUsed) : 'never'}${skill.review.length ? ` · review: ${skill.review.join('; ')}` : ''}`;
    const metadata = {
      skills: shown.map((skill) => ({
        name: skill.name,
        version: skill.version,
        runs: skill.runs,
        failures: skill.failures,
        last_used: skill.lastUsed?.toISOString() ?? null,
        review: skill.review,
      })),
    };
    if (flags.review) {
      if (shown.length === 0) return ok('No learned skill needs review.', { metadata });
      return ok(
        [
          `Learned skills to review (${shown.length}) — keep, fix (skills.update) or retire (skills.retire) each; nothing is removed without the user:`,
          ...shown.map(line),
        ].join('\n'),
        { metadata },
      );
    }
    if (shown.length === 0)
      return ok('No learned skills yet: skills.write saves a procedure the user wants remembered.', {
        metadata,
      });
    return ok([`Learned skills (${shown.length}):`, ...shown.map(line)].join('\n'), { metadata });
  },
});
