import type { ResolvedConfig } from '../../config/index.ts';
import { errorMessage } from '../../errors.ts';
import {
  IMAP_SCHEMES,
  type MailServer,
  ProviderError,
  parseAddress,
  parseMailUrl,
  parseMailWithHeaders,
  SMTP_SCHEMES,
  sendSmtp,
} from '../../integrations/index.ts';
import type { Logger } from '../../logging/index.ts';
import type { CursorStore } from '../cursor-store.ts';
import { plainText } from '../markdown.ts';
import { markdownHtml } from '../markdown-html.ts';
import { networkFailure } from '../send-errors.ts';
import type { ChannelAdapter, ChatMeta, GatewayPort, OutboundMessage, SendResult } from '../types.ts';
import { normalizeInboundMail } from './inbound-mail.ts';
import { MailboxWatcher } from './mailbox-watcher.ts';

/** One reply is one mail: long answers are not split. */
const EMAIL_MAX_LENGTH = 100_000;
/** Failures that prove the mail never left: nothing was sent, so it is sent again. */
const NOT_SENT = /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH/;

export type EmailChannelOptions = {
  imap: MailServer;
  smtp: MailServer;
  /** `addr` or `Name <addr>`, the From of every reply. */
  from: string;
  /** The assistant's address (from `from`). */
  address: string;
  cursors: CursorStore;
  logger: Logger;
  /**
   * Take mail only when the receiving server's Authentication-Results proves the sender
   * (aligned DMARC, DKIM or SPF pass); default true.
   */
  requireAuthentication?: boolean;
  pollMs?: number;
  idleDelayMs?: number;
};

/**
 * Email as a channel, on the owner's mailbox settings: new mail in INBOX (IMAP IDLE, polling
 * as the fallback; the UID and UIDVALIDITY kept in the database) from admitted senders becomes
 * turns; replies go back by SMTP in the same thread (`In-Reply-To`, `References`, `Re:`), as
 * plain text with an HTML alternative, marked `Auto-Submitted: auto-replied` so other robots
 * do not answer them. Mail from robots (auto-replies, lists, bounces) is never answered, and a
 * stranger is told their pairing code once.
 */
export class EmailAdapter implements ChannelAdapter {
  readonly name = 'email' as const;
  readonly mode = 'polling' as const;
  readonly capabilities = { maxLength: EMAIL_MAX_LENGTH, pairingReplyOnce: true };
  readonly #options: EmailChannelOptions;
  #watcher: MailboxWatcher | null = null;

  constructor(options: EmailChannelOptions) {
    this.#options = options;
  }

  get watcher(): MailboxWatcher | null {
    return this.#watcher;
  }

  /** The HTML alternative of a reply. */
  format(markdown: string): string {
    return markdownHtml(markdown);
  }

  async start(gateway: GatewayPort): Promise<void> {
    const { logger, address } = this.#options;
    this.#watcher = new MailboxWatcher({
      imap: this.#options.imap,
      cursors: this.#options.cursors,
      logger,
      pollMs: this.#options.pollMs,
      idleDelayMs: this.#options.idleDelayMs,
      handle: async ({ uid, uidValidity, raw }) => {
        let mail: Awaited<ReturnType<typeof parseMailWithHeaders>>;
        try {
          mail = await parseMailWithHeaders(raw);
        } catch (error) {
          logger.warn(
            { channel: 'email', uid, err: errorMessage(error) },
            'email: skipped a mail that cannot be parsed',
          );
          return;
        }
        const received = normalizeInboundMail(mail, {
          address,
          fallbackId: `${uidValidity}.${uid}`,
          requireAuthentication: this.#options.requireAuthentication ?? true,
        });
        if ('skipped' in received) {
          logger.info({ channel: 'email', uid, reason: received.skipped }, 'email: not answered');
          return;
        }
        await gateway.receive(received.message);
      },
    });
    this.#watcher.start();
    logger.info({ channel: 'email', address }, 'email: watching the inbox');
  }

  async stop(): Promise<void> {
    await this.#watcher?.stop();
    this.#watcher = null;
  }

  async send(message: OutboundMessage, signal: AbortSignal): Promise<SendResult> {
    const text = plainText(message.text);
    try {
      const sent = await sendSmtp(
        this.#options.smtp,
        this.#options.from,
        {
          to: [message.chatId],
          subject: replySubject(message.meta, text),
          text,
          html: `<!doctype html><html><body><div style="font-family: sans-serif; line-height: 1.5">${this.format(message.text)}</div></body></html>`,
          inReplyTo: message.meta.replyToMessageId ?? null,
          references: message.meta.references ?? [],
          headers: { 'Auto-Submitted': 'auto-replied' },
        },
        {
          context: {
            provider: `the SMTP server ${this.#options.smtp.host}`,
            reconnect: 'set EMAIL_SMTP_URL',
          },
          signal,
        },
      );
      return { kind: 'sent', messageId: sent.id || null };
    } catch (error) {
      return sendFailure(error);
    }
  }
}

/** `Re: <subject>` of the thread; for a message that starts one (a reminder), its first line. */
export function replySubject(meta: ChatMeta, text: string): string {
  if (meta.subject) return /^\s*re\s*:/i.test(meta.subject) ? meta.subject : `Re: ${meta.subject}`;
  const line =
    text
      .split('\n')
      .find((candidate) => candidate.trim())
      ?.trim() ?? 'A message from Steward';
  return line.length > 70 ? `${line.slice(0, 67)}…` : line;
}

/**
 * An SMTP failure as a SendResult: a 4xx answer (the server said "not now") or a failure to
 * connect or log in is retried — nothing was accepted; a 5xx refusal fails; anything else
 * (the connection lost mid-message) may have been delivered, so it stays ambiguous.
 */
function sendFailure(error: unknown): SendResult {
  const cause =
    error instanceof ProviderError ? (error.cause as { responseCode?: number; code?: string }) : null;
  const detail = errorMessage(error);
  if (error instanceof ProviderError && error.issue === 'rejected') return { kind: 'failed', error: detail };
  if (error instanceof ProviderError && error.issue === 'auth') return { kind: 'retry', error: detail };
  if (cause?.responseCode && cause.responseCode >= 400 && cause.responseCode < 500)
    return { kind: 'retry', error: detail };
  if (NOT_SENT.test(`${detail} ${errorMessage(cause ?? '')}`) || cause?.code === 'EDNS')
    return { kind: 'retry', error: detail };
  return networkFailure(cause ?? error, 'email send');
}

/** Builds the adapter when `EMAIL_CHANNEL=on` and the mailbox settings are complete, else null. */
export function emailFromConfig(
  config: Pick<ResolvedConfig, 'channels' | 'email'>,
  logger: Logger,
  cursors: CursorStore,
): EmailAdapter | null {
  const { email } = config;
  if (config.channels.email !== 'on' || !email.imap_url || !email.smtp_url || !email.from) return null;
  const imap = parseMailUrl(email.imap_url, IMAP_SCHEMES);
  const smtp = parseMailUrl(email.smtp_url, SMTP_SCHEMES);
  const from = parseAddress(email.from);
  if (!imap || !smtp || !from) return null;
  return new EmailAdapter({
    imap,
    smtp,
    from: email.from,
    address: from.address,
    cursors,
    logger,
    pollMs: config.channels.email_poll_seconds * 1000,
    requireAuthentication: config.channels.email_require_authentication === 'on',
  });
}
