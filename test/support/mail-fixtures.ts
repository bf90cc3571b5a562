import { simpleParser } from 'mailparser';

/* Raw mails as clients and robots write them, and a reader for what Steward sent. */

export const ASSISTANT = 'steward@example.com';

let counter = 0;

/**
 * A raw RFC 5322 mail to the assistant, as the receiving server stored it (with its
 * Authentication-Results proving the sender); `headers` adds or overrides header fields.
 */
export function rawMail(options: {
  from: string;
  subject: string;
  text: string;
  messageId?: string;
  to?: string;
  headers?: Record<string, string>;
}): { raw: string; messageId: string } {
  const messageId = options.messageId ?? `<m${++counter}.${Date.now()}@mail.example.org>`;
  const domain = /@([^>\s]+)>?\s*$/.exec(options.from)?.[1] ?? 'example.org';
  const headers: Record<string, string> = {
    // What the receiving server adds on top: the sender proven (DKIM and DMARC pass).
    'Authentication-Results': `mx.example.com; dkim=pass header.d=${domain}; spf=pass smtp.mailfrom=${domain}; dmarc=pass header.from=${domain}`,
    From: options.from,
    To: options.to ?? `Steward <${ASSISTANT}>`,
    Subject: options.subject,
    Date: new Date().toUTCString(),
    'Message-ID': messageId,
    'MIME-Version': '1.0',
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Transfer-Encoding': '8bit',
    ...options.headers,
  };
  const head = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}`)
    .join('\r\n');
  return { raw: `${head}\r\n\r\n${options.text.replace(/\r?\n/g, '\r\n')}\r\n`, messageId };
}

/** What a sent mail says: threading, subject, both parts, and its header fields. */
export async function readSent(raw: string) {
  const mail = await simpleParser(raw);
  return {
    subject: mail.subject ?? '',
    inReplyTo: mail.inReplyTo ?? null,
    references: Array.isArray(mail.references) ? mail.references : mail.references ? [mail.references] : [],
    text: (mail.text ?? '').trim(),
    html: typeof mail.html === 'string' ? mail.html : '',
    to: mail.to && !Array.isArray(mail.to) ? mail.to.value.map((entry) => entry.address) : [],
    header: (name: string) => {
      const value = mail.headers.get(name.toLowerCase());
      return typeof value === 'string' ? value : value === undefined ? null : JSON.stringify(value);
    },
  };
}
