import type { ImapFlow } from 'imapflow';
import { lazyModule } from '../lazy-module.ts';
import { type FailureContext, networkFailure, ProviderError } from '../provider-error.ts';
import { mailOptions } from './compose-message.ts';
import type { OutgoingEmail } from './email-types.ts';
import type { MailServer } from './mail-urls.ts';

const imapflow = lazyModule<typeof import('imapflow')>('imapflow');
const nodemailer = lazyModule<typeof import('nodemailer')>('nodemailer');

/**
 * An imapflow client for `imap` (not connected). Plain `imap://` never upgrades with STARTTLS
 * unless the URL says `?starttls=true`. Auto-IDLE is off unless `idle` is given: then the
 * client idles after `idle.delayMs` of quiet and re-issues IDLE (or polls with NOOP on a server
 * without IDLE) every `idle.maxMs`.
 */
export function imapClient(
  imap: MailServer,
  options: { timeoutMs?: number; idle?: { delayMs: number; maxMs: number } } = {},
): ImapFlow {
  const timeout = options.timeoutMs ?? 20_000;
  const client = new (imapflow().ImapFlow)({
    host: imap.host,
    port: imap.port,
    secure: imap.secure,
    doSTARTTLS: imap.secure ? undefined : imap.starttls,
    auth: { user: imap.user, pass: imap.password },
    logger: false,
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout * 3,
    ...(options.idle
      ? {
          autoIdleDelay: options.idle.delayMs,
          maxIdleTime: options.idle.maxMs,
          missingIdleCommand: 'NOOP' as const,
        }
      : { disableAutoIdle: true }),
  });
  client.on('error', () => undefined);
  return client;
}

/**
 * A nodemailer transport for `smtp` (not connected): TLS from the start for `smtps://`, STARTTLS
 * required when the URL asks for it, never attempted otherwise. `timeoutMs` bounds connecting,
 * the greeting and a quiet socket; without it nodemailer's defaults apply.
 */
export function smtpTransport(smtp: MailServer, timeoutMs?: number) {
  return nodemailer().createTransport({
    host: smtp.host,
    port: smtp.port,
    secure: smtp.secure,
    ignoreTLS: !smtp.secure && !smtp.starttls,
    requireTLS: smtp.starttls,
    auth: smtp.user ? { user: smtp.user, pass: smtp.password } : undefined,
    ...(timeoutMs === undefined
      ? {}
      : { connectionTimeout: timeoutMs, greetingTimeout: timeoutMs, socketTimeout: timeoutMs }),
  });
}

/** Sends `email` as `from` through `smtp`; failures as ProviderError (auth, rejected, unavailable). */
export async function sendSmtp(
  smtp: MailServer,
  from: string,
  email: OutgoingEmail,
  options: { context: FailureContext; timeoutMs?: number; signal?: AbortSignal },
): Promise<{ id: string }> {
  const { signal } = options;
  signal?.throwIfAborted();
  const transport = smtpTransport(smtp, options.timeoutMs ?? 20_000);
  const onAbort = () => transport.close();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const info = await transport.sendMail(mailOptions(from, email));
    return { id: String(info.messageId ?? '') };
  } catch (error) {
    throw smtpFailure(options.context, error);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    transport.close();
  }
}

function smtpFailure(context: FailureContext, error: unknown): ProviderError {
  const failure = error as { code?: string; responseCode?: number; response?: string };
  if (failure.code === 'EAUTH') {
    return new ProviderError(
      context.provider,
      'auth',
      `${context.provider} refused the login: the password was changed or revoked. Reconnect with: ${context.reconnect}`,
      { cause: error },
    );
  }
  // A 4xx answer is "not now" (greylisting, a busy server), not a refusal.
  const temporary = failure.responseCode !== undefined && failure.responseCode < 500;
  if (
    (failure.code === 'EENVELOPE' && !temporary) ||
    (failure.responseCode !== undefined && failure.responseCode >= 500)
  ) {
    return new ProviderError(
      context.provider,
      'rejected',
      `${context.provider} refused the message: ${failure.response ?? failure.code}. Check the recipients.`,
      { cause: error },
    );
  }
  return networkFailure(context, error);
}
