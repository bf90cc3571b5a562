import { gmail_v1 } from '@googleapis/gmail/build/v1.js';
import type { AuthClient } from 'google-auth-library';
import addressparser from 'nodemailer/lib/addressparser/index.js';
import { googleCall } from '../google/google-call.ts';
import { badResponse, type FailureContext, ProviderError } from '../provider-error.ts';
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
import { parseAttachments, parseRawMessage } from './parse-message.ts';

export type GmailEmailOptions = {
  auth: AuthClient;
  /** GOOGLE_API_URL; Google's own when unset. */
  rootUrl?: string;
  address: string;
  /** `Name <addr>` or `addr`, used as From. */
  from: string;
  reconnect: string;
};

const SYSTEM_LABELS = new Set(['INBOX', 'UNREAD', 'STARRED', 'IMPORTANT', 'SENT', 'DRAFT', 'SPAM', 'TRASH']);

/** Gmail over its REST API (googleapis). Ids are Gmail message ids; labels are Gmail labels by name. */
export class GmailEmailProvider implements EmailProvider {
  readonly name = 'Gmail';
  readonly address: string;
  readonly #api: gmail_v1.Gmail;
  readonly #options: GmailEmailOptions;
  readonly #context: FailureContext;
  #labels: Map<string, string> | null = null;

  constructor(options: GmailEmailOptions) {
    this.#options = options;
    this.address = options.address;
    this.#api = new gmail_v1.Gmail({
      auth: options.auth,
      rootUrl: options.rootUrl,
      retry: false,
    } as gmail_v1.Options);
    this.#context = { provider: 'Gmail', reconnect: options.reconnect };
  }

  async search(query: EmailQuery, signal?: AbortSignal): Promise<EmailSummary[]> {
    const list = await googleCall(this.#context, () =>
      this.#api.users.messages.list(
        { userId: 'me', q: gmailQuery(query), maxResults: query.limit },
        { signal },
      ),
    );
    const ids = (list.messages ?? []).map((message) => message.id).filter((id): id is string => Boolean(id));
    const labels = await this.#labelNames(signal);
    const summaries = await Promise.all(
      ids.slice(0, query.limit).map(async (id) => {
        const message = await googleCall(this.#context, () =>
          this.#api.users.messages.get(
            { userId: 'me', id, format: 'metadata', metadataHeaders: ['From', 'To', 'Subject', 'Date'] },
            { signal },
          ),
        );
        return this.#summary(message, labels);
      }),
    );
    return summaries;
  }

  async read(id: string, signal?: AbortSignal): Promise<EmailMessage | null> {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) return null;
    const message = await this.#orNull(() =>
      googleCall(this.#context, () =>
        this.#api.users.messages.get({ userId: 'me', id, format: 'raw' }, { signal }),
      ),
    );
    if (!message) return null;
    if (typeof message.raw !== 'string')
      throw badResponse(this.#context, 'a message without its raw content');
    const parsed = await parseRawMessage(Buffer.from(message.raw, 'base64url'));
    const labelIds = message.labelIds ?? [];
    const unread = labelIds.includes('UNREAD');
    if (unread) {
      await googleCall(this.#context, () =>
        this.#api.users.messages.modify(
          { userId: 'me', id, requestBody: { removeLabelIds: ['UNREAD'] } },
          { signal },
        ),
      );
    }
    const names = await this.#labelNames(signal);
    return {
      id,
      ...parsed,
      unread,
      labels: labelIds.map((labelId) => names.get(labelId) ?? labelId).sort(),
      threadId: message.threadId ?? null,
    };
  }

  async attachments(id: string, signal?: AbortSignal): Promise<EmailAttachmentContent[] | null> {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) return null;
    const message = await this.#orNull(() =>
      googleCall(this.#context, () =>
        this.#api.users.messages.get({ userId: 'me', id, format: 'raw' }, { signal }),
      ),
    );
    if (!message) return null;
    if (typeof message.raw !== 'string')
      throw badResponse(this.#context, 'a message without its raw content');
    return parseAttachments(Buffer.from(message.raw, 'base64url'));
  }

  async send(email: OutgoingEmail, signal?: AbortSignal): Promise<{ id: string }> {
    const raw = (await composeRawMessage(this.#options.from, email)).toString('base64url');
    const sent = await googleCall(this.#context, () =>
      this.#api.users.messages.send(
        { userId: 'me', requestBody: { raw, threadId: email.threadId ?? undefined } },
        { signal },
      ),
    );
    return { id: sent.id ?? '' };
  }

  async saveDraft(email: OutgoingEmail, signal?: AbortSignal): Promise<{ id: string }> {
    const raw = (await composeRawMessage(this.#options.from, email)).toString('base64url');
    const draft = await googleCall(this.#context, () =>
      this.#api.users.drafts.create(
        { userId: 'me', requestBody: { message: { raw, threadId: email.threadId ?? undefined } } },
        { signal },
      ),
    );
    return { id: draft.id ?? '' };
  }

  async archive(id: string, signal?: AbortSignal): Promise<boolean> {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) return false;
    const modified = await this.#orNull(() =>
      googleCall(this.#context, () =>
        this.#api.users.messages.modify(
          { userId: 'me', id, requestBody: { removeLabelIds: ['INBOX'] } },
          { signal },
        ),
      ),
    );
    return modified !== null;
  }

  async label(
    id: string,
    change: { add: string[]; remove: string[] },
    signal?: AbortSignal,
  ): Promise<string[] | null> {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) return null;
    const byName = await this.#labelIds(signal);
    const addLabelIds: string[] = [];
    for (const name of change.add) {
      const known = byName.get(name.toLowerCase());
      if (known) addLabelIds.push(known);
      else {
        const created = await googleCall(this.#context, () =>
          this.#api.users.labels.create({ userId: 'me', requestBody: { name } }, { signal }),
        );
        if (!created.id) throw badResponse(this.#context, 'a created label without an id');
        addLabelIds.push(created.id);
        this.#labels = null;
      }
    }
    const removeLabelIds = change.remove.flatMap((name) => byName.get(name.toLowerCase()) ?? []);
    const modified = await this.#orNull(() =>
      googleCall(this.#context, () =>
        this.#api.users.messages.modify(
          { userId: 'me', id, requestBody: { addLabelIds, removeLabelIds } },
          { signal },
        ),
      ),
    );
    if (!modified) return null;
    const names = await this.#labelNames(signal);
    return (modified.labelIds ?? []).map((labelId) => names.get(labelId) ?? labelId).sort();
  }

  async close(): Promise<void> {}

  #summary(message: gmail_v1.Schema$Message, labels: Map<string, string>): EmailSummary {
    if (!message.id) throw badResponse(this.#context, 'a message without an id');
    const headers = new Map(
      (message.payload?.headers ?? []).map((header) => [
        String(header.name).toLowerCase(),
        String(header.value ?? ''),
      ]),
    );
    const date = headers.get('date')
      ? new Date(headers.get('date')!)
      : message.internalDate
        ? new Date(Number(message.internalDate))
        : null;
    const labelIds = message.labelIds ?? [];
    return {
      id: message.id,
      from: addresses(headers.get('from'))[0] ?? null,
      to: addresses(headers.get('to')),
      subject: headers.get('subject') ?? '',
      date: date && !Number.isNaN(date.getTime()) ? date : null,
      unread: labelIds.includes('UNREAD'),
      labels: labelIds.map((labelId) => labels.get(labelId) ?? labelId).sort(),
    };
  }

  async #orNull<T>(call: () => Promise<T>): Promise<T | null> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof ProviderError && error.issue === 'not_found') return null;
      throw error;
    }
  }

  /** Label id → name. */
  async #labelNames(signal?: AbortSignal): Promise<Map<string, string>> {
    if (!this.#labels) {
      const list = await googleCall(this.#context, () =>
        this.#api.users.labels.list({ userId: 'me' }, { signal }),
      );
      this.#labels = new Map(
        (list.labels ?? []).flatMap((label) =>
          label.id && label.name ? [[label.id, label.name] as const] : [],
        ),
      );
    }
    return this.#labels;
  }

  /** Lowercased name → id, system labels included. */
  async #labelIds(signal?: AbortSignal): Promise<Map<string, string>> {
    const names = await this.#labelNames(signal);
    const ids = new Map<string, string>();
    for (const system of SYSTEM_LABELS) ids.set(system.toLowerCase(), system);
    for (const [id, name] of names) ids.set(name.toLowerCase(), id);
    return ids;
  }
}

/** The Gmail search string for a query (dates as epoch seconds, which Gmail accepts). */
export function gmailQuery(query: EmailQuery): string {
  const quote = (value: string) => (/[\s"()]/.test(value) ? `"${value.replaceAll('"', '')}"` : value);
  const parts: string[] = [];
  parts.push(query.label ? `label:${quote(query.label.replaceAll(' ', '-'))}` : 'in:inbox');
  if (query.from) parts.push(`from:${quote(query.from)}`);
  if (query.to) parts.push(`to:${quote(query.to)}`);
  if (query.subject) parts.push(`subject:(${query.subject.replaceAll(/[()]/g, ' ')})`);
  if (query.unread) parts.push('is:unread');
  if (query.after) parts.push(`after:${Math.floor(query.after.getTime() / 1000)}`);
  if (query.before) parts.push(`before:${Math.floor(query.before.getTime() / 1000)}`);
  if (query.text) parts.push(query.text);
  return parts.join(' ');
}

function addresses(header: string | undefined): EmailAddress[] {
  if (!header) return [];
  return addressparser(header, { flatten: true }).flatMap((entry) =>
    entry.address ? [{ name: entry.name || null, address: entry.address }] : [],
  );
}
