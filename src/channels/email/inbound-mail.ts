import type { ParsedMailWithHeaders } from '../../integrations/index.ts';
import type { InboundMessage } from '../types.ts';
import { stripQuotedReply } from './quoted-reply.ts';
import { unauthenticatedReason } from './sender-authentication.ts';

/** Longest text of one mail taken as a turn (the rest is cut, with a note). */
const MAX_TEXT = 20_000;
/** Senders that are machines answering mail: answering them back is how loops start. */
const MACHINE_SENDER = /^(mailer-daemon|postmaster|no-?reply|do-?not-?reply|bounces?)([+-].*)?@/i;
const REPLY_SUBJECT = /^\s*((re|aw|sv|antw|fwd?|wg)\s*:\s*)+/i;

/**
 * Why a mail must not be answered, or null. RFC 3834's `Auto-Submitted` (anything but `no`),
 * `Precedence: bulk|junk|list|auto_reply`, a mailing list (`List-Id`, `List-Unsubscribe`),
 * the auto-reply headers of Exchange and others, a delivery report, a bounce (empty
 * Return-Path), a machine sender (mailer-daemon, postmaster, no-reply), and Steward's own mail.
 */
export function loopReason(mail: ParsedMailWithHeaders, ownAddress: string): string | null {
  const header = (name: string) => mail.headers[name]?.toLowerCase().trim() ?? '';
  const from = mail.from?.address.toLowerCase() ?? '';
  if (!from) return 'no sender address';
  if (from === ownAddress.toLowerCase()) return 'sent from the assistant’s own address';
  if (MACHINE_SENDER.test(from)) return `a machine sender (${from.split('@')[0]})`;
  const autoSubmitted = header('auto-submitted');
  if (autoSubmitted && autoSubmitted !== 'no') return `Auto-Submitted: ${autoSubmitted}`;
  const precedence = header('precedence');
  if (/^(bulk|junk|list|auto_reply)\b/.test(precedence)) return `Precedence: ${precedence}`;
  if (header('list-id') || header('list-unsubscribe')) return 'a mailing list (List-Id / List-Unsubscribe)';
  if (header('x-autoreply') || header('x-autorespond') || header('x-auto-reply'))
    return 'an auto-reply header';
  if (
    /\b(oof|autoreply)\b/.test(header('x-auto-response-suppress')) &&
    /^(automatic reply|out of office)/i.test(mail.subject)
  )
    return 'an out-of-office reply';
  if (header('content-type').startsWith('multipart/report')) return 'a delivery report';
  if (header('return-path') === '<>') return 'a bounce (empty Return-Path)';
  return null;
}

/** Whether the mail names `address` (or `local+tag@domain`) among its recipients. */
function addressedTo(mail: ParsedMailWithHeaders, address: string): boolean {
  const [local, domain] = address.toLowerCase().split('@');
  return [...mail.to, ...mail.cc].some((recipient) => {
    const [theirLocal, theirDomain] = recipient.address.toLowerCase().split('@');
    return theirDomain === domain && (theirLocal === local || theirLocal?.startsWith(`${local}+`));
  });
}

/**
 * A mail in the assistant's inbox as an InboundMessage, or why it is not answered (a robot, not
 * addressed to the assistant, a sender the receiving server did not authenticate). The sender
 * is their address (lower case); the id is the Message-ID (`fallbackId` without one), so the
 * same mail delivered twice is stored once. The text is the new part of the mail, quoted
 * history cut; a first message's subject is part of what was asked.
 */
export function normalizeInboundMail(
  mail: ParsedMailWithHeaders,
  context: { address: string; fallbackId: string; requireAuthentication: boolean },
): { message: InboundMessage } | { skipped: string } {
  const loop = loopReason(mail, context.address);
  if (loop) return { skipped: loop };
  if (!addressedTo(mail, context.address)) return { skipped: 'not addressed to the assistant (To/Cc)' };
  const unproven = context.requireAuthentication ? unauthenticatedReason(mail) : null;
  if (unproven) return { skipped: unproven };
  const sender = mail.from!.address.toLowerCase();
  const subject = mail.subject.trim();
  let body = stripQuotedReply(mail.text);
  if (body.length > MAX_TEXT) body = `${body.slice(0, MAX_TEXT)}\n\n[the rest of this mail was cut]`;
  const isReply = REPLY_SUBJECT.test(subject) || mail.inReplyTo !== null;
  const text = !subject || isReply ? body : body ? `${subject}\n\n${body}` : subject;
  const messageId = mail.messageId ?? `<${context.fallbackId}@steward.invalid>`;
  return {
    message: {
      channel: 'email',
      channelMessageId: messageId,
      chatId: sender,
      senderId: sender,
      senderName: mail.from?.name ?? null,
      kind: !text && mail.attachments.length > 0 ? 'unsupported' : text.startsWith('/') ? 'command' : 'text',
      text,
      meta: {
        subject: subject || '(no subject)',
        replyToMessageId: messageId,
        references: [...mail.references.filter((reference) => reference !== messageId), messageId].slice(-20),
      },
    },
  };
}
