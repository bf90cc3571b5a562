import type { AddressObject, ParsedMail as ParsedMailObject } from 'mailparser';
import { htmlToReadableText } from '../html-text.ts';
import { lazyModule } from '../lazy-module.ts';
import type {
  EmailAddress,
  EmailAttachment,
  EmailAttachmentContent,
  EmailMessage,
  EmailSummary,
} from './email-types.ts';

const mailparser = lazyModule<typeof import('mailparser')>('mailparser');

export type ParsedMail = Omit<EmailMessage, keyof EmailSummary | 'threadId'> & {
  from: EmailAddress | null;
  to: EmailAddress[];
  subject: string;
  date: Date | null;
};

/** Parses a raw RFC 5322 message: readable text (HTML turned into text), attachments, threading headers. */
export async function parseRawMessage(raw: Buffer | string): Promise<ParsedMail> {
  return summarize(await mailparser().simpleParser(raw, { skipImageLinks: true }));
}

/** A parsed message with its header fields (lower-cased names, first value, as text) and In-Reply-To. */
export type ParsedMailWithHeaders = ParsedMail & {
  inReplyTo: string | null;
  headers: Record<string, string>;
};

/** parseRawMessage, plus the header fields a mail channel reads (Auto-Submitted, Precedence, List-Id…). */
export async function parseMailWithHeaders(raw: Buffer | string): Promise<ParsedMailWithHeaders> {
  const mail = await mailparser().simpleParser(raw, { skipImageLinks: true });
  const headers: Record<string, string> = {};
  for (const line of mail.headerLines) {
    const name = line.key.toLowerCase();
    if (name in headers) continue;
    headers[name] = line.line
      .slice(line.line.indexOf(':') + 1)
      .replace(/\r?\n[ \t]+/g, ' ')
      .trim();
  }
  return { ...summarize(mail), inReplyTo: mail.inReplyTo ?? null, headers };
}

function summarize(mail: ParsedMailObject): ParsedMail {
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
  const mail = await mailparser().simpleParser(raw, { skipImageLinks: true, skipTextToHtml: true });
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
