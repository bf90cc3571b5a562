import { z } from 'zod';
import { type OutgoingEmail, parseAddressList } from '../../../integrations/index.ts';
import { flag } from '../../flags.ts';
import { defineHandler, fail, ok } from '../../types.ts';
import { integrationsOf, withProvider } from '../provider-call.ts';

const composeFlags = {
  to: flag.list(),
  cc: flag.list().optional(),
  subject: flag.string(),
  body: flag.text(),
};

function outgoing(flags: {
  to: string[];
  cc?: string[];
  subject: string;
  body: string;
}): { ok: true; email: OutgoingEmail } | { ok: false; error: string } {
  const to = parseAddressList(flags.to);
  if (!to.ok)
    return { ok: false, error: `--to: "${to.bad}" is not an email address (write addr or "Name <addr>").` };
  if (to.addresses.length === 0) return { ok: false, error: '--to needs at least one address.' };
  const cc = parseAddressList(flags.cc ?? []);
  if (!cc.ok) return { ok: false, error: `--cc: "${cc.bad}" is not an email address.` };
  return {
    ok: true,
    email: { to: to.addresses, cc: cc.addresses, subject: flags.subject, text: flags.body },
  };
}

export const sendEmailHandler = defineHandler({
  name: 'email.send',
  flags: z.object(composeFlags).strict(),
  async execute(flags, ctx) {
    const built = outgoing(flags);
    if (!built.ok) return fail(built.error);
    return withProvider(integrationsOf(ctx).email(ctx.user.id), async (email) => {
      const sent = await email.send(built.email, ctx.signal);
      return ok(`Sent "${flags.subject}" to ${built.email.to.join(', ')} from ${email.address}.`, {
        sideEffects: [`email sent to ${built.email.to.join(', ')}`],
        metadata: { id: sent.id, provider: email.name },
        receipt: `"${flags.subject}" to ${built.email.to.join(', ')}`,
      });
    });
  },
});

export const draftEmailHandler = defineHandler({
  name: 'email.draft',
  flags: z.object(composeFlags).strict(),
  async execute(flags, ctx) {
    const built = outgoing(flags);
    if (!built.ok) return fail(built.error);
    return withProvider(integrationsOf(ctx).email(ctx.user.id), async (email) => {
      const draft = await email.saveDraft(built.email, ctx.signal);
      return ok(
        `Saved a draft "${flags.subject}" to ${built.email.to.join(', ')} in ${email.name} [${draft.id}]. Nothing was sent.`,
        {
          metadata: { id: draft.id, provider: email.name },
          receipt: `draft "${flags.subject}" to ${built.email.to.join(', ')} (not sent)`,
        },
      );
    });
  },
});

export const replyEmailHandler = defineHandler({
  name: 'email.reply',
  flags: z
    .object({
      id: flag.string(),
      body: flag.text(),
      all: flag.bool().default(false),
      draft: flag.bool().default(false),
    })
    .strict(),
  async execute(flags, ctx) {
    return withProvider(integrationsOf(ctx).email(ctx.user.id), async (email) => {
      const original = await email.read(flags.id, ctx.signal);
      if (!original)
        return fail(`No message with id ${flags.id} in ${email.name}. Find ids with email.search.`);
      if (!original.from) return fail(`Message ${flags.id} has no sender to reply to.`);
      const self = email.address.toLowerCase();
      const others = flags.all
        ? [...original.to, ...original.cc].filter((address) => address.address.toLowerCase() !== self)
        : [];
      const subject = /^re:/i.test(original.subject) ? original.subject : `Re: ${original.subject}`;
      const reply: OutgoingEmail = {
        to: [original.from.address],
        cc: others.map((address) => address.address),
        subject,
        text: flags.body,
        inReplyTo: original.messageId,
        references: [...original.references, ...(original.messageId ? [original.messageId] : [])],
        threadId: original.threadId,
      };
      if (flags.draft) {
        const draft = await email.saveDraft(reply, ctx.signal);
        return ok(`Saved a reply draft to ${original.from.address} [${draft.id}]. Nothing was sent.`, {
          metadata: { id: draft.id, provider: email.name },
          receipt: `draft reply "${subject}" to ${original.from.address} (not sent)`,
        });
      }
      const sent = await email.send(reply, ctx.signal);
      const recipients = [...reply.to, ...(reply.cc ?? [])].join(', ');
      return ok(`Replied to [${flags.id}] ("${subject}") to ${recipients}.`, {
        sideEffects: [`email sent to ${recipients}`],
        metadata: { id: sent.id, provider: email.name },
        receipt: `"${subject}" to ${recipients}`,
      });
    });
  },
});
