import { z } from 'zod';
import type { EmailQuery } from '../../../integrations/index.ts';
import { parseDateInput } from '../../../tasks/index.ts';
import { startOfLocalDay } from '../../../time/index.ts';
import { fenceExternal } from '../../external.ts';
import { flag } from '../../flags.ts';
import { defineHandler, fail, ok, type SkillContext } from '../../types.ts';
import { limitNote } from '../limit-note.ts';
import { integrationsOf, withProvider } from '../provider-call.ts';
import { formatMessage, formatSummaryLine } from './format.ts';

function day(
  input: string | undefined,
  ctx: SkillContext,
  name: string,
): { ok: true; value?: Date } | { ok: false; error: string } {
  if (input === undefined) return { ok: true };
  const parsed = parseDateInput(input, ctx.user.timezone, ctx.now());
  if (!parsed.ok) return { ok: false, error: `--${name}: ${parsed.error}` };
  return { ok: true, value: startOfLocalDay(parsed.date, ctx.user.timezone) };
}

export const searchEmailHandler = defineHandler({
  name: 'email.search',
  flags: z
    .object({
      from: flag.string().optional(),
      to: flag.string().optional(),
      subject: flag.string().optional(),
      text: flag.string().optional(),
      query: flag.string().optional(),
      after: flag.string().optional(),
      before: flag.string().optional(),
      unread: flag.bool().optional(),
      label: flag.string().optional(),
      folder: flag.string().optional(),
      limit: flag.int({ min: 1, max: 50 }).default(10),
    })
    .strict(),
  async execute(flags, ctx) {
    const after = day(flags.after, ctx, 'after');
    if (!after.ok) return fail(after.error);
    const before = day(flags.before, ctx, 'before');
    if (!before.ok) return fail(before.error);
    if (flags.label && flags.folder && flags.label !== flags.folder) {
      return fail(
        'Give --label or --folder, not both (they are the same filter: a Gmail label or an IMAP folder).',
      );
    }
    const text = [flags.text, flags.query].filter(Boolean).join(' ') || undefined;
    const query: EmailQuery = {
      from: flags.from,
      to: flags.to,
      subject: flags.subject,
      text,
      after: after.value,
      before: before.value,
      unread: flags.unread,
      label: flags.label ?? flags.folder,
      limit: flags.limit,
    };
    return withProvider(integrationsOf(ctx).email(ctx.user.id), async (email) => {
      const messages = await email.search(query, ctx.signal);
      const metadata = {
        ids: messages.map((message) => message.id),
        count: messages.length,
        provider: email.name,
      };
      if (messages.length === 0)
        return ok(`No messages match (${email.name}, ${email.address}).`, { metadata });
      const lines = messages.map((message) => formatSummaryLine(message, ctx.user.timezone));
      return ok(
        `${messages.length} message${messages.length === 1 ? '' : 's'}, newest first (${email.name}, ${email.address}). Read one with email.read --id ID.\n${fenceExternal('email:search', lines.join('\n'))}${limitNote(messages.length, flags.limit, 50)}`,
        { metadata: { ...metadata, limitReached: messages.length >= flags.limit } },
      );
    });
  },
});

export const readEmailHandler = defineHandler({
  name: 'email.read',
  flags: z.object({ id: flag.string() }).strict(),
  async execute(flags, ctx) {
    return withProvider(integrationsOf(ctx).email(ctx.user.id), async (email) => {
      const message = await email.read(flags.id, ctx.signal);
      if (!message)
        return fail(`No message with id ${flags.id} in ${email.name}. Find ids with email.search.`);
      return ok(formatMessage(message, ctx.user.timezone), {
        metadata: { id: message.id, attachments: message.attachments, provider: email.name },
      });
    });
  },
});
