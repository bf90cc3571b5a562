import { createHash } from 'node:crypto';
import type { ChannelsConfig } from '../../config/index.ts';
import { errorMessage } from '../../errors.ts';
import type { Logger } from '../../logging/index.ts';
import type { CursorStore } from '../cursor-store.ts';
import { plainText } from '../markdown.ts';
import { unreachable } from '../probe.ts';
import { httpFailure } from '../send-errors.ts';
import type {
  ChannelAdapter,
  ChannelProbe,
  ChatMeta,
  GatewayPort,
  OutboundMessage,
  SendResult,
} from '../types.ts';
import { MatrixAnswerError, MatrixClient, MatrixUnreadableAnswer, segment } from './matrix-client.ts';
import { parseRoomEvent, type SyncResponse } from './matrix-event.ts';
import { matrixHtml } from './matrix-html.ts';
import { type MatrixBot, normalizeMatrixEvent } from './normalize-event.ts';
import { SYNC_FILTER, SyncLoop } from './sync-loop.ts';

/**
 * A message part's longest formatted text. Matrix events are capped at 64 KiB, and each part
 * carries its text twice (`body` and `formatted_body`), in up to three bytes a character.
 */
export const MATRIX_MAX_LENGTH = 8000;

/** Pages of older events fetched to fill a gap in a limited timeline (100 events each). */
const MAX_BACKFILL_PAGES = 10;

export const ENCRYPTED_ROOM_TEXT = [
  "I can't read this room: it is end-to-end encrypted, and Steward works only in unencrypted rooms.",
  'Start a room with encryption turned off (in Element: *New room*, then turn off *Enable end-to-end encryption*) and invite me there. I am leaving this one.',
].join('\n\n');

export type MatrixOptions = {
  homeserverUrl: string;
  accessToken: string;
  /** The bot account's id, `@steward:example.org`. */
  userId: string;
  /** Where the /sync position (and notices already given) are kept. */
  cursors: CursorStore;
  /** Whether an inviter is admitted (linked or in STEWARD_ALLOW): only their invitations are accepted. */
  admitted(senderId: string): Promise<boolean>;
  logger: Logger;
  pollTimeoutMs?: number;
  stallGraceMs?: number;
  fetch?: typeof fetch;
};

type Backfilled = { chunk?: unknown[]; end?: string };

/**
 * Matrix over the Client-Server API with plain fetch: `/sync` long polling (SyncLoop) with its
 * `since` token in the database; invitations from admitted users joined, others declined;
 * replies sent with a transaction id derived from the outbox row, so the homeserver itself
 * drops a resent one. Unencrypted rooms only: an encrypted room gets one notice, then the bot
 * leaves it.
 */
export class MatrixAdapter implements ChannelAdapter {
  readonly name = 'matrix' as const;
  readonly mode = 'polling' as const;
  readonly capabilities = { typingIndicator: true, maxLength: MATRIX_MAX_LENGTH };
  readonly client: MatrixClient;
  readonly #options: MatrixOptions;
  readonly #bot: MatrixBot;
  /** Joined members per room (2 or fewer: a direct conversation, where every message is answered). */
  readonly #members = new Map<string, number>();
  #sync: SyncLoop | null = null;

  constructor(options: MatrixOptions) {
    this.#options = options;
    this.client = new MatrixClient({
      homeserverUrl: options.homeserverUrl,
      accessToken: options.accessToken,
      fetch: options.fetch,
    });
    this.#bot = { userId: options.userId, displayName: null };
  }

  get sync(): SyncLoop | null {
    return this.#sync;
  }

  /** A Matrix conversation is a room, learned when the person writes; none is made up. */
  directChatId(): null {
    return null;
  }

  format(markdown: string): string {
    return matrixHtml(markdown);
  }

  /** `GET /account/whoami`: the access token is valid and belongs to MATRIX_USER_ID. */
  async probe(signal: AbortSignal): Promise<ChannelProbe> {
    try {
      const me = await this.client.request<{ user_id?: unknown }>('GET', '/account/whoami', { signal });
      if (me.user_id !== this.#bot.userId) {
        return {
          ok: false,
          problem: `the access token belongs to ${String(me.user_id)}, not to MATRIX_USER_ID ${this.#bot.userId}`,
          fix: 'set MATRIX_USER_ID to the account the token was made for (or make a token for that account)',
        };
      }
      return { ok: true, detail: `${this.#bot.userId} answers whoami` };
    } catch (error) {
      if (error instanceof MatrixAnswerError || error instanceof MatrixUnreadableAnswer) {
        return {
          ok: false,
          problem: error.message,
          fix: 'check MATRIX_ACCESS_TOKEN (Element: Settings → Help & About → Access token) and MATRIX_HOMESERVER_URL',
        };
      }
      return unreachable('the homeserver', this.#options.homeserverUrl, error, 'MATRIX_HOMESERVER_URL');
    }
  }

  async start(gateway: GatewayPort): Promise<void> {
    try {
      const profile = await this.client.request<{ displayname?: unknown }>(
        'GET',
        `/profile/${segment(this.#bot.userId)}/displayname`,
        { signal: AbortSignal.timeout(10_000) },
      );
      if (typeof profile.displayname === 'string') this.#bot.displayName = profile.displayname;
    } catch (error) {
      this.#options.logger.warn(
        { channel: 'matrix', err: errorMessage(error) },
        'matrix: could not read the bot account profile; check MATRIX_HOMESERVER_URL and MATRIX_ACCESS_TOKEN',
      );
    }
    this.#sync = new SyncLoop({
      client: this.client,
      cursors: this.#options.cursors,
      logger: this.#options.logger,
      pollTimeoutMs: this.#options.pollTimeoutMs,
      stallGraceMs: this.#options.stallGraceMs,
      handle: (sync, first, since) => this.#handleBatch(gateway, sync, first, since),
    });
    this.#sync.start();
    this.#options.logger.info({ channel: 'matrix' }, 'matrix: syncing');
  }

  async stop(): Promise<void> {
    await this.#sync?.stop();
    this.#sync = null;
  }

  /** Invitations, then each joined room's events in order. Throws when a message could not be stored. */
  async #handleBatch(
    gateway: GatewayPort,
    sync: SyncResponse,
    first: boolean,
    since: string | null,
  ): Promise<void> {
    for (const [roomId, invite] of Object.entries(sync.rooms?.invite ?? {})) {
      await this.#answerInvite(roomId, invite.invite_state?.events ?? []);
    }
    // The first sync's timeline is history from before Steward was set up: it is not answered.
    if (first) return;
    for (const [roomId, room] of Object.entries(sync.rooms?.join ?? {})) {
      const count = room.summary?.['m.joined_member_count'];
      if (count !== undefined) this.#members.set(roomId, count);
      let timeline = room.timeline?.events ?? [];
      if (room.timeline?.limited && room.timeline.prev_batch && since) {
        timeline = [...(await this.#backfill(roomId, room.timeline.prev_batch, since)), ...timeline];
      }
      const parsed = [...(room.state?.events ?? []), ...timeline].map(parseRoomEvent);
      if (parsed.some((event) => 'encrypted' in event)) {
        await this.#refuseEncrypted(roomId);
        continue;
      }
      for (const event of timeline.map(parseRoomEvent)) {
        if ('problem' in event) {
          this.#options.logger.warn(
            { channel: 'matrix', problem: event.problem },
            'matrix: dropped an event Steward cannot use',
          );
        } else if ('member' in event && count === undefined) {
          this.#members.delete(roomId); // counted again when needed
        } else if ('message' in event) {
          const message = normalizeMatrixEvent(
            event.message,
            roomId,
            this.#bot,
            await this.#isDirect(roomId),
          );
          if (message) await gateway.receive(message);
        }
      }
    }
  }

  /**
   * The events a limited timeline left out, oldest first: `/messages` backwards from the
   * timeline's start to the previous `since`, so a long absence skips nothing.
   */
  async #backfill(roomId: string, from: string, to: string): Promise<unknown[]> {
    const older: unknown[] = [];
    let token: string | undefined = from;
    for (let page = 0; token && page < MAX_BACKFILL_PAGES; page++) {
      const answer: Backfilled = await this.client.request<Backfilled>(
        'GET',
        `/rooms/${segment(roomId)}/messages`,
        {
          query: {
            dir: 'b',
            from: token,
            to,
            limit: '100',
            filter: JSON.stringify(JSON.parse(SYNC_FILTER).room.timeline),
          },
          signal: AbortSignal.timeout(30_000),
        },
      );
      const chunk = answer.chunk ?? [];
      older.push(...chunk);
      token = chunk.length > 0 ? answer.end : undefined;
    }
    if (token) {
      this.#options.logger.warn(
        { channel: 'matrix', pages: MAX_BACKFILL_PAGES },
        'matrix: a room had more missed events than Steward fetches; the oldest were skipped',
      );
    }
    return older.reverse();
  }

  async #isDirect(roomId: string): Promise<boolean> {
    let count = this.#members.get(roomId);
    if (count === undefined) {
      try {
        const answer = await this.client.request<{ joined?: Record<string, unknown> }>(
          'GET',
          `/rooms/${segment(roomId)}/joined_members`,
          { signal: AbortSignal.timeout(15_000) },
        );
        count = Object.keys(answer.joined ?? {}).length;
        this.#members.set(roomId, count);
      } catch (error) {
        // Refused for good: treat the room as a group (only mentions are answered).
        if (!(error instanceof MatrixAnswerError && error.status < 500 && error.status !== 429)) throw error;
        this.#options.logger.warn(
          { channel: 'matrix', err: errorMessage(error) },
          'matrix: could not count the members of a room; answering mentions only',
        );
        return false;
      }
    }
    return count <= 2;
  }

  /** Joins when the inviter is admitted, declines otherwise. A failure to reach the homeserver is thrown (the batch is retried). */
  async #answerInvite(roomId: string, stripped: unknown[]): Promise<void> {
    const { logger } = this.#options;
    const invite = stripped
      .map(parseRoomEvent)
      .find(
        (event) =>
          'member' in event &&
          event.member.state_key === this.#bot.userId &&
          event.member.membership === 'invite',
      );
    const inviter = invite && 'member' in invite ? invite.member.sender : null;
    const admitted = inviter !== null && (await this.#options.admitted(inviter));
    const action = admitted ? `/join/${segment(roomId)}` : `/rooms/${segment(roomId)}/leave`;
    try {
      await this.client.request('POST', action, { body: {}, signal: AbortSignal.timeout(30_000) });
      logger.info(
        { channel: 'matrix', room: roomId },
        admitted
          ? 'matrix: joined a room on an admitted user’s invitation'
          : 'matrix: declined an invitation from someone not admitted',
      );
    } catch (error) {
      if (error instanceof MatrixAnswerError && error.status < 500 && error.status !== 429) {
        logger.warn(
          { channel: 'matrix', err: errorMessage(error) },
          'matrix: could not answer an invitation',
        );
        return;
      }
      throw error;
    }
  }

  /** Says once that the room is encrypted, then leaves it. Failures are logged (tried again with the room's next event). */
  async #refuseEncrypted(roomId: string): Promise<void> {
    const { cursors, logger } = this.#options;
    const key = `encrypted-notice:${roomId}`;
    try {
      if (await cursors.get(key)) return;
      const txnId = `steward-encrypted-${createHash('sha256').update(roomId).digest('hex').slice(0, 16)}`;
      await this.client.request('PUT', `/rooms/${segment(roomId)}/send/m.room.message/${txnId}`, {
        body: this.#content(ENCRYPTED_ROOM_TEXT, {}),
        signal: AbortSignal.timeout(30_000),
      });
      await this.client.request('POST', `/rooms/${segment(roomId)}/leave`, {
        body: {},
        signal: AbortSignal.timeout(30_000),
      });
      await cursors.set(key, new Date().toISOString());
      logger.info({ channel: 'matrix', room: roomId }, 'matrix: left an encrypted room after saying why');
    } catch (error) {
      logger.warn(
        { channel: 'matrix', err: errorMessage(error) },
        'matrix: could not answer an encrypted room',
      );
    }
  }

  /** An m.room.message: plain `body`, Matrix HTML `formatted_body`, the reply or thread it belongs to. */
  #content(markdown: string, meta: ChatMeta): Record<string, unknown> {
    const relatesTo = meta.threadId
      ? {
          rel_type: 'm.thread',
          event_id: meta.threadId,
          is_falling_back: true,
          'm.in_reply_to': { event_id: meta.replyToMessageId ?? meta.threadId },
        }
      : meta.replyToMessageId
        ? { 'm.in_reply_to': { event_id: meta.replyToMessageId } }
        : null;
    return {
      msgtype: 'm.text',
      body: plainText(markdown),
      format: 'org.matrix.custom.html',
      formatted_body: this.format(markdown),
      ...(relatesTo ? { 'm.relates_to': relatesTo } : {}),
    };
  }

  /** The transaction id of an outbox row: the same on every retry, so the homeserver sends it once. */
  static transactionId(message: Pick<OutboundMessage, 'outboxId' | 'chatId' | 'text'>): string {
    const digest = createHash('sha256')
      .update(`${message.chatId}\n${message.text}`)
      .digest('hex')
      .slice(0, 12);
    return `steward-${message.outboxId}-${digest}`;
  }

  async send(message: OutboundMessage, signal: AbortSignal): Promise<SendResult> {
    const path = `/rooms/${segment(message.chatId)}/send/m.room.message/${MatrixAdapter.transactionId(message)}`;
    try {
      const answer = await this.client.request<{ event_id?: unknown }>('PUT', path, {
        body: this.#content(message.text, message.meta),
        signal,
      });
      return typeof answer.event_id === 'string'
        ? { kind: 'sent', messageId: answer.event_id }
        : { kind: 'retry', error: 'matrix send answered without an event_id' };
    } catch (error) {
      if (error instanceof MatrixAnswerError) {
        return httpFailure(
          error.status,
          error.message,
          error.retryAfterMs ? error.retryAfterMs / 1000 : null,
        );
      }
      // No answer, or one that says nothing: the same transaction id makes a resend safe.
      const detail =
        error instanceof MatrixUnreadableAnswer ? error.message : `matrix send: ${errorMessage(error)}`;
      return { kind: 'retry', error: `${detail}; resent with the same transaction id` };
    }
  }

  async typing(chatId: string): Promise<void> {
    await this.client.request('PUT', `/rooms/${segment(chatId)}/typing/${segment(this.#bot.userId)}`, {
      body: { typing: true, timeout: 8_000 },
      signal: AbortSignal.timeout(5_000),
    });
  }
}

/** Builds the adapter from `channels.matrix`, or null unless the homeserver, token and user id are all set. */
export function matrixFromConfig(
  channels: ChannelsConfig,
  logger: Logger,
  services: { cursors: CursorStore; admitted(senderId: string): Promise<boolean> },
): MatrixAdapter | null {
  const { matrix } = channels;
  if (!matrix.homeserver_url || !matrix.access_token || !matrix.user_id) return null;
  return new MatrixAdapter({
    homeserverUrl: matrix.homeserver_url,
    accessToken: matrix.access_token,
    userId: matrix.user_id,
    logger,
    ...services,
  });
}
