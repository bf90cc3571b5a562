import type { SessionInfo } from '@discordjs/ws';
import type { CursorStore } from '../cursor-store.ts';

type StoredSession = SessionInfo & { botUserId: string | null };

/**
 * The Gateway session as @discordjs/ws keeps it (`retrieveSessionInfo`/`updateSessionInfo`),
 * with one difference: the sequence handed back is the last one whose events Steward has
 * handled (stored, or found to need nothing), not the last one received. A resume — after a
 * disconnect, an op 7, or a restart, since the session is kept in the database — asks Discord
 * to replay from there, so an event received but not yet stored is sent again, never lost.
 */
export class GatewaySession {
  readonly #cursors: CursorStore;
  #session: SessionInfo | null = null;
  #handled: number | null = null;
  #loaded = false;
  /** While stopping, the library's "forget the session" is ignored: a restart resumes it. */
  keepOnClose = false;
  botUserId: string | null;

  constructor(cursors: CursorStore, botUserId: string | null) {
    this.#cursors = cursors;
    this.botUserId = botUserId;
  }

  /** Reads the session a previous run left (once). Throws when the database is down. */
  async load(): Promise<void> {
    if (this.#loaded) return;
    const saved = await this.#cursors.get('session');
    this.#loaded = true;
    if (!saved) return;
    try {
      const session = JSON.parse(saved) as StoredSession;
      this.#session = {
        sessionId: session.sessionId,
        resumeURL: session.resumeURL,
        sequence: session.sequence,
        shardId: session.shardId,
        shardCount: session.shardCount,
      };
      this.#handled = session.sequence;
      this.botUserId = session.botUserId ?? this.botUserId;
    } catch {
      this.#session = null;
    }
  }

  retrieve(): SessionInfo | null {
    if (!this.#session) return null;
    return { ...this.#session, sequence: this.#handled ?? this.#session.sequence };
  }

  /**
   * The library's `updateSessionInfo`. Never throws (the library does not catch): a save that
   * fails is made again with the next stored message, and the session in memory stays right.
   */
  async update(info: SessionInfo | null): Promise<void> {
    if (!info) {
      if (this.keepOnClose) return;
      this.#session = null;
      this.#handled = null;
      await this.#save().catch(() => undefined);
      return;
    }
    const fresh = info.sessionId !== this.#session?.sessionId;
    this.#session = { ...info };
    if (fresh) {
      // A new session (after identify) starts at its READY; nothing before it can be replayed.
      this.#handled = info.sequence;
      await this.#save().catch(() => undefined);
    }
  }

  /**
   * Marks the event with sequence `sequence` handled (events are handled in order). `persist`:
   * also save it now (after a stored message); other events are saved with the next message.
   */
  async handled(sequence: number, persist: boolean): Promise<void> {
    if (this.#handled === null || sequence > this.#handled) this.#handled = sequence;
    if (persist) await this.#save();
  }

  async #save(): Promise<void> {
    const session = this.retrieve();
    await this.#cursors.set(
      'session',
      session ? JSON.stringify({ ...session, botUserId: this.botUserId } satisfies StoredSession) : '',
    );
  }
}
