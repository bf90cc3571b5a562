import type { ImapFlow } from 'imapflow';
import { errorMessage } from '../../errors.ts';
import { imapClient, type MailServer } from '../../integrations/index.ts';
import type { Logger } from '../../logging/index.ts';
import { waitUnlessAborted } from '../../time/index.ts';
import type { CursorStore } from '../cursor-store.ts';
import { backoffMs, PollLoop } from '../poll-loop.ts';

export type MailboxWatcherOptions = {
  imap: MailServer;
  /** `uidvalidity`, `last_uid` (the last message handled) and `checked_at`. */
  cursors: CursorStore;
  logger: Logger;
  /** Stores one new message. Throws when it could not be stored: it is read again later. */
  handle(message: { uid: number; uidValidity: string; raw: Buffer }): Promise<void>;
  /** How often the inbox is checked without a push from IDLE (and IDLE renewed); default 60 s. */
  pollMs?: number;
  /** Quiet before IDLE starts after a check; default 1 s. */
  idleDelayMs?: number;
};

/**
 * New mail in INBOX, by UID: IMAP IDLE pushes an EXISTS and the inbox is read at once; without
 * IDLE (or a push lost) it is read every `pollMs`. The last handled UID is saved after each
 * message is stored, with the mailbox's UIDVALIDITY, so a restart neither replays nor skips.
 * The first start begins at the mail arriving from then on. When UIDVALIDITY changes (the
 * mailbox was rebuilt, its UIDs renumbered) the mail that arrived since the last check is read
 * by arrival date instead; the Message-ID drops any already stored.
 */
export class MailboxWatcher extends PollLoop {
  readonly #options: MailboxWatcherOptions;
  #client: ImapFlow | null = null;
  /** Completed checks of the inbox (for tests and the operator view). */
  checks = 0;
  /** Whether the server offers IDLE (null until connected). */
  idle: boolean | null = null;

  constructor(options: MailboxWatcherOptions) {
    super();
    this.#options = options;
  }

  protected override interrupt(): void {
    this.#client?.close();
  }

  /** One connection: the inbox read on each push from IDLE and every `pollMs`, until it closes. */
  protected override async poll(signal: AbortSignal): Promise<void> {
    const pollMs = this.#options.pollMs ?? 60_000;
    const client = imapClient(this.#options.imap, {
      idle: { delayMs: this.#options.idleDelayMs ?? 1_000, maxMs: pollMs },
    });
    this.#client = client;
    let wake: (() => void) | null = null;
    client.on('exists', () => wake?.());
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    try {
      await client.connect();
      this.idle = client.capabilities.has('IDLE');
      const mailbox = await client.mailboxOpen('INBOX');
      await this.#position(client, String(mailbox.uidValidity), await uidNextOf(client, mailbox.uidNext));
      this.healthy();
      while (!signal.aborted && client.usable) {
        const woken = new Promise<void>((resolve) => {
          wake = resolve;
        });
        await this.#catchUp(client, String(mailbox.uidValidity));
        await Promise.race([woken, waitUnlessAborted(pollMs, signal), closed]);
      }
    } finally {
      this.#client = null;
      await client.logout().catch(() => client.close());
    }
  }

  protected override failed(error: unknown, failures: number): number {
    const delay = backoffMs(failures, 2000);
    this.#options.logger.warn(
      { channel: 'email', err: errorMessage(error), retryInMs: delay },
      'email: reading the inbox failed; check EMAIL_IMAP_URL (retrying)',
    );
    return delay;
  }

  /** Where to read from: the first start begins now; a rebuilt mailbox is read by arrival date. */
  async #position(client: ImapFlow, uidValidity: string, uidNext: number): Promise<void> {
    const { cursors, logger } = this.#options;
    const stored = await cursors.get('uidvalidity');
    if (stored === uidValidity) return;
    if (stored === null) {
      await cursors.set('last_uid', String(uidNext - 1));
      await cursors.set('uidvalidity', uidValidity);
      return;
    }
    const checkedAt = new Date(Number(await cursors.get('checked_at')) || Date.now());
    logger.warn(
      { channel: 'email', before: stored, now: uidValidity },
      'email: the inbox was rebuilt (UIDVALIDITY changed); reading the mail that arrived since the last check',
    );
    const uids = await this.#arrivedSince(client, checkedAt);
    for (const uid of uids) await this.#take(client, uid, uidValidity);
    await cursors.set('last_uid', String(Math.max(uidNext - 1, ...uids)));
    await cursors.set('uidvalidity', uidValidity);
  }

  async #arrivedSince(client: ImapFlow, since: Date): Promise<number[]> {
    const day = new Date(Date.UTC(since.getUTCFullYear(), since.getUTCMonth(), since.getUTCDate()));
    const found = (await client.search({ since: day }, { uid: true })) || [];
    const uids: number[] = [];
    if (found.length === 0) return uids;
    for await (const message of client.fetch(found, { uid: true, internalDate: true }, { uid: true })) {
      const arrived = message.internalDate ? new Date(message.internalDate).getTime() : 0;
      if (arrived >= since.getTime() - 60_000) uids.push(message.uid);
    }
    return uids.sort((a, b) => a - b);
  }

  /** Every message after `last_uid`, oldest first, each stored before the cursor moves past it. */
  async #catchUp(client: ImapFlow, uidValidity: string): Promise<void> {
    const { cursors } = this.#options;
    const last = Number(await cursors.get('last_uid')) || 0;
    const found = (await client.search({ uid: `${last + 1}:*` }, { uid: true })) || [];
    for (const uid of found.filter((uid) => uid > last).sort((a, b) => a - b)) {
      await this.#take(client, uid, uidValidity);
      await cursors.set('last_uid', String(uid));
    }
    await cursors.set('checked_at', String(Date.now()));
    this.checks++;
  }

  async #take(client: ImapFlow, uid: number, uidValidity: string): Promise<void> {
    const message = await client.fetchOne(String(uid), { uid: true, source: true }, { uid: true });
    if (message === false || !message.source) return;
    await this.#options.handle({ uid, uidValidity, raw: message.source });
  }
}

/** The mailbox's UIDNEXT; from the highest UID when the server did not say it on SELECT. */
async function uidNextOf(client: ImapFlow, announced: number | undefined): Promise<number> {
  if (Number.isFinite(announced)) return announced!;
  const all = (await client.search({ all: true }, { uid: true })) || [];
  return Math.max(0, ...all) + 1;
}
