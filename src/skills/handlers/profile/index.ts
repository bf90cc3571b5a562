import { z } from 'zod';
import { getUser, isValidTimezone, type User, updateUser } from '../../../users/index.ts';
import { flag } from '../../flags.ts';
import { defineHandler, fail, ok, type SkillHandler } from '../../types.ts';

const describeUser = (user: User) =>
  `User ${user.id}${user.displayName ? ` (${user.displayName})` : ''} · time zone ${user.timezone}`;

export const getProfileHandler = defineHandler({
  name: 'profile.get',
  flags: z.object({}).strict(),
  async execute(_flags, ctx) {
    const user = await getUser(ctx.services.database, ctx.user.id);
    if (!user) return fail(`No profile for ${ctx.user.id}.`);
    return ok(describeUser(user), {
      metadata: { id: user.id, timezone: user.timezone, name: user.displayName },
    });
  },
});

export const updateProfileHandler = defineHandler({
  name: 'profile.update',
  flags: z
    .object({
      timezone: flag
        .string()
        .refine(isValidTimezone, 'must be an IANA time zone such as Europe/Berlin or America/New_York')
        .optional(),
      name: flag.string().optional(),
    })
    .strict()
    .refine((flags) => flags.timezone !== undefined || flags.name !== undefined, {
      message: 'give --timezone, --name or both',
    }),
  async execute(flags, ctx) {
    const user = await updateUser(ctx.services.database, ctx.user.id, {
      timezone: flags.timezone,
      ...(flags.name !== undefined ? { displayName: flags.name } : {}),
    });
    return ok(`Updated: ${describeUser(user)}`, {
      metadata: { id: user.id, timezone: user.timezone, name: user.displayName },
    });
  },
});

export const profileHandlers: SkillHandler[] = [getProfileHandler, updateProfileHandler];
