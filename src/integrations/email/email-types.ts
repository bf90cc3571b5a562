export type EmailAddress = { name: string | null; address: string };

export type EmailQuery = {
  from?: string;
  to?: string;
  subject?: string;
  /** Words anywhere in the message. */
  text?: string;
  after?: Date;
  before?: Date;
  unread?: boolean;
  /** A Gmail label, or an IMAP folder (mailbox). Default: the inbox. */
  label?: string;
  limit: number;
};

export type EmailSummary = {
  /** Stable id to pass back to read, reply, archive and label. */
  id: string;
  from: EmailAddress | null;
  to: EmailAddress[];
  subject: string;
  date: Date | null;
  unread: boolean;
  labels: string[];
};

export type EmailAttachment = { filename: string; contentType: string; size: number };

/** An attachment with its bytes (`email.save_attachments`). */
export type EmailAttachmentContent = EmailAttachment & { content: Buffer };

export type EmailMessage = EmailSummary & {
  cc: EmailAddress[];
  /** The readable text: the text part, or the HTML part turned into text. */
  text: string;
  attachments: EmailAttachment[];
  /** RFC 5322 Message-ID, for threading replies. */
  messageId: string | null;
  references: string[];
  /** The provider's conversation id (Gmail), when it has one. */
  threadId: string | null;
};

export type OutgoingEmail = {
  to: string[];
  cc?: string[];
  subject: string;
  text: string;
  inReplyTo?: string | null;
  references?: string[];
  threadId?: string | null;
  /** An HTML alternative to `text`. */
  html?: string | null;
  /** Extra header fields (`Auto-Submitted`). */
  headers?: Record<string, string>;
};

/**
 * One mailbox. Ids come from `search` and are opaque to callers. Unknown ids are `null` /
 * `false`, not errors; provider failures throw ProviderError (see provider-error.ts).
 * Every method honours `signal`.
 */
export interface EmailProvider {
  /** Shown to the user: `Gmail`, `IMAP`. */
  readonly name: string;
  /** The connected address. */
  readonly address: string;
  search(query: EmailQuery, signal?: AbortSignal): Promise<EmailSummary[]>;
  read(id: string, signal?: AbortSignal): Promise<EmailMessage | null>;
  send(message: OutgoingEmail, signal?: AbortSignal): Promise<{ id: string }>;
  saveDraft(message: OutgoingEmail, signal?: AbortSignal): Promise<{ id: string }>;
  /** The message's attachments with their bytes, without marking it read; null for an unknown id. */
  attachments(id: string, signal?: AbortSignal): Promise<EmailAttachmentContent[] | null>;
  /** Moves the message out of the inbox. False for an unknown id. */
  archive(id: string, signal?: AbortSignal): Promise<boolean>;
  /** Adds and removes labels (IMAP: keywords); returns the labels after, or null for an unknown id. */
  label(
    id: string,
    change: { add: string[]; remove: string[] },
    signal?: AbortSignal,
  ): Promise<string[] | null>;
  close(): Promise<void>;
}
