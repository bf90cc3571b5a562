import type { ImapFlow, SearchObject } from 'imapflow';
import { type FailureContext, networkFailure, ProviderError } from '../provider-error.ts';
import { composeRawMessage } from './compose-message.ts';
import type {
  EmailAddress,
  EmailAttachmentContent,
  EmailMessage,
  EmailProvider,
  EmailQuery,
  EmailSummary,
  OutgoingEmail,
} from './email-types.ts';
import { imapClient, sendSmtp } from './mail-connections.ts';
import type { MailServer } from './mail-urls.ts';
import { parseAttachments, parseRawMessage } from './parse-message.ts';

export type ImapEmailOptions = {
  imap: MailServer;
  /** Null when only reading is configured (no EMAIL_SMTP_URL). */
  smtp: MailServer | null;
  /** `addr` or `Name <addr>`. */
  from: string;
  address: string;
  /** How to restore access, named in auth failures. */
  reconnect: string;
  timeoutMs?: number;
};

const KEYWORD = /^[^\s(){%*"\\\]]+$/;
type MessageRef = { mailbox: string; uid: number };

/**
 * Any mailbox over IMAP (imapflow) and SMTP (nodemailer). Ids are `<mailbox>:<uid>`. Labels
 * are IMAP keywords; archive moves to the `\Archive` mailbox (or `Archive`, created on first use).
 * Plain `imap://` / `smtp://` never upgrade with STARTTLS unless the URL says `?starttls=true`.
 */
export class ImapEmailProvider implements EmailProvider {
  readonly name = 'IMAP';
  readonly address: string;
  readonly #options: ImapEmailOptions;
  readonly #imapContext: FailureContext;
  readonly #smtpContext: FailureContext;
  #client: Promise<ImapFlow> | null = null;

  constructor(options: ImapEmailOptions) {
    this.#options = options;
    this.address = options.address;
    this.#imapContext = { provider: `the IMAP server ${options.imap.host}`, reconnect: options.reconnect };
    this.#smtpContext = {
      provider: `the SMTP server ${options.smtp?.host ?? '(none)'}`,
      reconnect: options.reconnect,
    };
  }

  async search(query: EmailQuery, signal?: AbortSignal): Promise<EmailSummary[]> {
    return this.#imap(signal, async (client) => {
      let mailbox = 'INBOX';
      let keyword: string | undefined;
      if (query.label) {
        const found = await findMailbox(client, query.label);
        if (found) mailbox = found;
        else if (KEYWORD.test(query.label)) keyword = query.label;
        else return [];
      }
      const lock = await client.getMailboxLock(mailbox, { readOnly: true });
      try {
        const criteria: SearchObject = {};
        if (query.from) criteria.from = query.from;
        if (query.to) criteria.to = query.to;
        if (query.subject) criteria.subject = query.subject;
        if (query.text) criteria.text = query.text;
        if (query.after) criteria.since = query.after;
        if (query.before) criteria.before = query.before;
        if (query.unread) criteria.seen = false;
        if (keyword) criteria.keyword = keyword;
        if (Object.keys(criteria).length === 0) criteria.all = true;
        const found = (await client.search(criteria, { uid: true })) || [];
        const uids = [...found].sort((a, b) => b - a).slice(0, query.limit);
        if (uids.length === 0) return [];
        const summaries: Array<EmailSummary & { uid: number }> = [];
        for await (const message of client.fetch(
          uids,
          { uid: true, flags: true, envelope: true, internalDate: true },
          { uid: true },
        )) {
          const envelope = message.envelope;
          summaries.push({
            uid: message.uid,
            id: messageId({ mailbox, uid: message.uid }),
            from: toAddresses(envelope?.from)[0] ?? null,
            to: toAddresses(envelope?.to),
            subject: envelope?.subject ?? '',
            date: envelope?.date
              ? new Date(envelope.date)
              : message.internalDate
                ? new Date(message.internalDate)
                : null,
            unread: !message.flags?.has('\\Seen'),
            labels: keywords(message.flags),
          });
        }
        // Newest arrival first: UIDs grow with arrival, while Date headers are whatever the sender wrote.
        return summaries.sort((a, b) => b.uid - a.uid).map(({ uid: _uid, ...summary }) => summary);
      } finally {
        lock.release();
      }
    });
  }

  async read(id: string, signal?: AbortSignal): Promise<EmailMessage | null> {
    const ref = parseId(id);
    if (!ref) return null;
    return this.#imap(signal, async (client) => {
      if (!(await findMailbox(client, ref.mailbox))) return null;
      const lock = await client.getMailboxLock(ref.mailbox);
      try {
        const message = await client.fetchOne(
          String(ref.uid),
          { uid: true, flags: true, source: true },
          { uid: true },
        );
        if (message === false || !message.source) return null;
        const parsed = await parseRawMessage(message.source);
        const unread = !message.flags?.has('\\Seen');
        // Reading marks it read, as a mail client would.
        if (unread) await client.messageFlagsAdd(String(ref.uid), ['\\Seen'], { uid: true });
        return { id, ...parsed, unread, labels: keywords(message.flags), threadId: null };
      } finally {
        lock.release();
      }
    });
  }

  async attachments(id: string, signal?: AbortSignal): Promise<EmailAttachmentContent[] | null> {
    const ref = parseId(id);
    if (!ref) return null;
    return this.#imap(signal, async (client) => {
      if (!(await findMailbox(client, ref.mailbox))) return null;
      const lock = await client.getMailboxLock(ref.mailbox);
      try {
        const message = await client.fetchOne(String(ref.uid), { uid: true, source: true }, { uid: true });
        if (message === false || !message.source) return null;
        return await parseAttachments(message.source);
      } finally {
        lock.release();
      }
    });
  }

  async send(email: OutgoingEmail, signal?: AbortSignal): Promise<{ id: string }> {
    signal?.throwIfAborted();
    const smtp = this.#options.smtp;
    if (!smtp) {
      throw new ProviderError(
        'SMTP',
        'rejected',
        `No SMTP server is configured for sending from ${this.address}: set EMAIL_SMTP_URL (smtps://user:pass@host), or ${this.#options.reconnect}.`,
      );
    }
    return sendSmtp(smtp, this.#options.from, email, {
      context: this.#smtpContext,
      timeoutMs: this.#options.timeoutMs,
      signal,
    });
  }

  async saveDraft(email: OutgoingEmail, signal?: AbortSignal): Promise<{ id: string }> {
    const raw = await composeRawMessage(this.#options.from, email);
    return this.#imap(signal, async (client) => {
      const drafts = (await specialUse(client, '\\Drafts')) ?? (await ensureMailbox(client, 'Drafts'));
      const appended = await client.append(drafts, raw, ['\\Draft', '\\Seen']);
      const uid = appended && typeof appended === 'object' ? appended.uid : undefined;
      return { id: uid ? messageId({ mailbox: drafts, uid }) : `${drafts}:?` };
    });
  }

  async archive(id: string, signal?: AbortSignal): Promise<boolean> {
    const ref = parseId(id);
    if (!ref) return false;
    return this.#imap(signal, async (client) => {
      if (!(await findMailbox(client, ref.mailbox))) return false;
      const archive = (await specialUse(client, '\\Archive')) ?? (await ensureMailbox(client, 'Archive'));
      const lock = await client.getMailboxLock(ref.mailbox);
      try {
        const exists = (await client.search({ uid: String(ref.uid) }, { uid: true })) || [];
        if (exists.length === 0) return false;
        if (archive === ref.mailbox) return true;
        await client.messageMove(String(ref.uid), archive, { uid: true });
        return true;
      } finally {
        lock.release();
      }
    });
  }

  async label(
    id: string,
    change: { add: string[]; remove: string[] },
    signal?: AbortSignal,
  ): Promise<string[] | null> {
    const ref = parseId(id);
    if (!ref) return null;
    const bad = [...change.add, ...change.remove].find((name) => !KEYWORD.test(name));
    if (bad) {
      throw new ProviderError(
        this.#imapContext.provider,
        'rejected',
        `"${bad}" cannot be an IMAP label: use one word without spaces, quotes or brackets.`,
      );
    }
    return this.#imap(signal, async (client) => {
      if (!(await findMailbox(client, ref.mailbox))) return null;
      const lock = await client.getMailboxLock(ref.mailbox);
      try {
        const uid = String(ref.uid);
        const exists = (await client.search({ uid }, { uid: true })) || [];
        if (exists.length === 0) return null;
        if (change.add.length) await client.messageFlagsAdd(uid, change.add, { uid: true });
        if (change.remove.length) await client.messageFlagsRemove(uid, change.remove, { uid: true });
        const message = await client.fetchOne(uid, { uid: true, flags: true }, { uid: true });
        return message ? keywords(message.flags) : [];
      } finally {
        lock.release();
      }
    });
  }

  async close(): Promise<void> {
    const pending = this.#client;
    this.#client = null;
    if (!pending) return;
    const client = await pending.catch(() => null);
    if (!client) return;
    await client.logout().catch(() => client.close());
  }

  async #imap<T>(signal: AbortSignal | undefined, work: (client: ImapFlow) => Promise<T>): Promise<T> {
    signal?.throwIfAborted();
    let client: ImapFlow | null = null;
    const onAbort = () => client?.close();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      client = await this.#connect();
      return await work(client);
    } catch (error) {
      if (error instanceof ProviderError) throw error;
      if (signal?.aborted) throw signal.reason;
      throw imapFailure(this.#imapContext, error);
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  #connect(): Promise<ImapFlow> {
    if (!this.#client) {
      const client = imapClient(this.#options.imap, { timeoutMs: this.#options.timeoutMs });
      this.#client = client.connect().then(
        () => client,
        (error: unknown) => {
          this.#client = null;
          throw error;
        },
      );
    }
    return this.#client;
  }
}

export function messageId(ref: MessageRef): string {
  return `${encodeURIComponent(ref.mailbox)}:${ref.uid}`;
}

function parseId(id: string): MessageRef | null {
  const match = /^(.+):(\d+)$/.exec(id.trim());
  if (!match) return null;
  try {
    return { mailbox: decodeURIComponent(match[1]!), uid: Number(match[2]) };
  } catch {
    return null;
  }
}

async function findMailbox(client: ImapFlow, name: string): Promise<string | null> {
  if (name.toUpperCase() === 'INBOX') return 'INBOX';
  const boxes = await client.list();
  const lower = name.toLowerCase();
  const match =
    boxes.find((box) => box.path === name) ??
    boxes.find((box) => box.path.toLowerCase() === lower || box.name.toLowerCase() === lower);
  return match?.path ?? null;
}

async function specialUse(client: ImapFlow, use: string): Promise<string | null> {
  const boxes = await client.list();
  return boxes.find((box) => box.specialUse === use)?.path ?? null;
}

async function ensureMailbox(client: ImapFlow, name: string): Promise<string> {
  const existing = await findMailbox(client, name);
  if (existing) return existing;
  const created = await client.mailboxCreate(name);
  return created.path;
}

function keywords(flags: Set<string> | undefined): string[] {
  return flags ? [...flags].filter((flag) => !flag.startsWith('\\')).sort() : [];
}

function toAddresses(list: Array<{ name?: string; address?: string }> | undefined): EmailAddress[] {
  return (list ?? []).flatMap((entry) =>
    entry.address ? [{ name: entry.name || null, address: entry.address }] : [],
  );
}

function imapFailure(context: FailureContext, error: unknown): ProviderError {
  const failure = error as {
    authenticationFailed?: boolean;
    responseStatus?: string;
    responseText?: string;
    code?: string;
  };
  if (failure.authenticationFailed) {
    return new ProviderError(
      context.provider,
      'auth',
      `${context.provider} refused the login: the password was changed or revoked. Reconnect with: ${context.reconnect}`,
      { cause: error },
    );
  }
  if (failure.responseStatus === 'NO' || failure.responseStatus === 'BAD') {
    return new ProviderError(
      context.provider,
      'rejected',
      `${context.provider} refused the command: ${failure.responseText ?? failure.responseStatus}.`,
      { cause: error },
    );
  }
  return networkFailure(context, error);
}
