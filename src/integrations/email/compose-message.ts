import type MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { lazyModule } from '../lazy-module.ts';
import type { OutgoingEmail } from './email-types.ts';

const composer = lazyModule<{ default: typeof MailComposer }>('nodemailer/lib/mail-composer/index.js');

/** The nodemailer message for `email` sent as `from` (threading headers included). */
export function mailOptions(from: string, email: OutgoingEmail) {
  return {
    from,
    to: email.to,
    cc: email.cc?.length ? email.cc : undefined,
    subject: email.subject,
    text: email.text,
    html: email.html ?? undefined,
    headers: email.headers,
    inReplyTo: email.inReplyTo ?? undefined,
    references: email.references?.length ? email.references : undefined,
  };
}

/** The raw RFC 5322 bytes of `email` (for Gmail's API and IMAP APPEND). */
export async function composeRawMessage(from: string, email: OutgoingEmail): Promise<Buffer> {
  const Composer = composer().default;
  return new Composer(mailOptions(from, email)).compile().build();
}
