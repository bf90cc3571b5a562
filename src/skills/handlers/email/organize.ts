import { z } from 'zod';
import { flag } from '../../flags.ts';
import { defineHandler, fail, ok } from '../../types.ts';
import { integrationsOf, withProvider } from '../provider-call.ts';

export const archiveEmailHandler = defineHandler({
  name: 'email.archive',
  flags: z.object({ id: flag.string() }).strict(),
  async execute(flags, ctx) {
    return withProvider(integrationsOf(ctx).email(ctx.user.id), async (email) => {
      const done = await email.archive(flags.id, ctx.signal);
      if (!done) return fail(`No message with id ${flags.id} in ${email.name}. Find ids with email.search.`);
      return ok(`Archived [${flags.id}] (out of the inbox; nothing deleted).`, {
        metadata: { id: flags.id },
      });
    });
  },
});

export const labelEmailHandler = defineHandler({
  name: 'email.label',
  flags: z
    .object({
      id: flag.string(),
      add: flag.list().optional(),
      remove: flag.list().optional(),
    })
    .strict(),
  async execute(flags, ctx) {
    const add = flags.add ?? [];
    const remove = flags.remove ?? [];
    if (add.length === 0 && remove.length === 0) return fail('Give --add LABELS and/or --remove LABELS.');
    return withProvider(integrationsOf(ctx).email(ctx.user.id), async (email) => {
      const labels = await email.label(flags.id, { add, remove }, ctx.signal);
      if (!labels)
        return fail(`No message with id ${flags.id} in ${email.name}. Find ids with email.search.`);
      return ok(`[${flags.id}] labels now: ${labels.join(', ') || '(none)'}.`, {
        metadata: { id: flags.id, labels },
        receipt: `${flags.id}: ${[...add.map((label) => `+${label}`), ...remove.map((label) => `-${label}`)].join(' ')}`,
      });
    });
  },
});
