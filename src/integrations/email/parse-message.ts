import { type AddressObject, simpleParser } from 'mailparser';
import { htmlToReadableText } from '../html-text.ts';
import type {
  EmailAddress,
  EmailAttachment,
  EmailAttachmentContent,
  EmailMessage,
  EmailSummary,
} from './email-types.ts';

export type ParsedMail = Omit<EmailMessage, keyof EmailSummary | 'threadId'> & {
  from: EmailAddress | null;
  to: EmailAddress[];
  subject: string;
  date: Date | null;
};

/** Parses a raw RFC 5322 message: readable text (HTML turned into text), attachments, threading headers. */
export async function parseRawMessage(raw: Buffer | string): Promise<ParsedMail> {
  const mail = await simpleParser(raw, { skipImageLinks: true });
  const text = (mail.text ?? '').trim() || (mail.html ? htmlToReadableText(String(mail.html)) : '');
  const attachments: EmailAttachment[] = mail.attachments
    .filter((attachment) => attachment.contentDisposition !== 'inline' || attachment.filename)
    .map((attachment) => ({
      filename: attachment.filename ?? '(unnamed)',
      contentType: attachment.contentType,
      size: attachment.size,
    }));
  const references = Array.isArray(mail.references)
    ? mail.references
    : mail.references
      ? [mail.references]
      : [];
  return {
    from: addresses(mail.from)[0] ?? null,
    to: addresses(mail.to),
    cc: addresses(mail.cc),
    subject: mail.subject ?? '',
    date: mail.date ?? null,
    text,
    attachments,
    messageId: mail.messageId ?? null,
    references,
  };
}

/** The attachments of a raw message with their bytes (the ones parseRawMessage lists). */
export async function parseAttachments(raw: Buffer | string): Promise<EmailAttachmentContent[]> {
  const mail = await simpleParser(raw, { skipImageLinks: true, skipTextToHtml: true });
  return mail.attachments
    .filter((attachment) => attachment.contentDisposition !== 'inline' || attachment.filename)
    .map((attachment) => ({
      filename: attachment.filename ?? '(unnamed)',
      contentType: attachment.contentType,
      size: attachment.size,
      content: attachment.content,
    }));
}

function addresses(value: AddressObject | AddressObject[] | undefined): EmailAddress[] {
  if (!value) return [];
  const objects = Array.isArray(value) ? value : [value];
  return objects.flatMap((object) =>
    object.value.flatMap((entry) =>
      entry.address ? [{ name: entry.name || null, address: entry.address }] : [],
    ),
  );
}
