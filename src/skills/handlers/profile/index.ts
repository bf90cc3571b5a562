import { z } from 'zod';
import { isTimeZone } from '../../../time/index.ts';
import {
  getUser,
  parseVoiceReplies,
  setVoiceReplies,
  type User,
  updateUser,
  type VoiceReplies,
  voiceRepliesOf,
} from '../../../users/index.ts';
import { flag } from '../../flags.ts';
import { defineHandler, fail, ok, type SkillHandler } from '../../types.ts';

const VOICE_REPLIES: Record<VoiceReplies, string> = {
  auto: 'voice replies to voice notes',
  text: 'always text replies',
  voice: 'always voice replies',
};

const describeUser = (user: User, voice: VoiceReplies) =>
  `User ${user.id}${user.displayName ? ` (${user.displayName})` : ''} · time zone ${user.timezone}${voice === 'auto' ? '' : ` · ${VOICE_REPLIES[voice]}`}`;

export const getProfileHandler = defineHandler({
  name: 'profile.get',
  flags: z.object({}).strict(),
  async execute(_flags, ctx) {
    const user = await getUser(ctx.services.database, ctx.user.id);
    if (!user) return fail(`No profile for ${ctx.user.id}.`);
    const voice = await voiceRepliesOf(ctx.services.database, user.id);
    return ok(describeUser(user, voice), {
      metadata: { id: user.id, timezone: user.timezone, name: user.displayName, voiceReplies: voice },
    });
  },
});

export const updateProfileHandler = defineHandler({
  name: 'profile.update',
  flags: z
    .object({
      timezone: flag
        .string()
        .refine(isTimeZone, 'must be an IANA time zone such as Europe/Berlin or America/New_York')
        .optional(),
      name: flag.string().optional(),
      voice_replies: flag
        .string()
        .refine(
          (value) => parseVoiceReplies(value) !== null,
          'must be auto (voice replies to voice notes), text (always text) or voice (always voice)',
        )
        .optional(),
    })
    .strict()
    .refine(
      (flags) =>
        flags.timezone !== undefined || flags.name !== undefined || flags.voice_replies !== undefined,
      { message: 'give --timezone, --name or both, or --voice-replies' },
    ),
  async execute(flags, ctx) {
    const { database } = ctx.services;
    const user = await updateUser(database, ctx.user.id, {
      timezone: flags.timezone,
      ...(flags.name !== undefined ? { displayName: flags.name } : {}),
    });
    const wanted = flags.voice_replies === undefined ? null : parseVoiceReplies(flags.voice_replies);
    if (wanted) await setVoiceReplies(database, user.id, wanted);
    const voice = wanted ?? (await voiceRepliesOf(database, user.id));
    return ok(`Updated: ${describeUser(user, voice)}`, {
      metadata: { id: user.id, timezone: user.timezone, name: user.displayName, voiceReplies: voice },
      receipt: [
        flags.timezone !== undefined ? `time zone ${user.timezone}` : '',
        flags.name !== undefined ? `name ${user.displayName ?? ''}` : '',
        wanted ? `voice replies ${voice}` : '',
      ]
        .filter(Boolean)
        .join(', '),
    });
  },
});

export const profileHandlers: SkillHandler[] = [getProfileHandler, updateProfileHandler];
