import { type FakeHttp, type FakeReply, type RecordedRequest, startFakeHttp } from './fake-http.ts';

/*
 * A fake Matrix homeserver (Client-Server API v3), bearer-checked: `/sync` long polling over a
 * stream of room events with `since` tokens, limited timelines and `/messages` to fill them,
 * invitations, join and leave, `send` idempotent by transaction id (as the spec requires),
 * typing, joined members and the profile's display name. Failures can be scripted per route.
 */

export const FAKE_MATRIX_TOKEN = 'syt_fake_matrix_access_token_0123';
export const FAKE_MATRIX_BOT = '@steward:fake.example';
const PREFIX = '/_matrix/client/v3';

type RoomEvent = {
  type: string;
  event_id: string;
  sender: string;
  origin_server_ts: number;
  content: Record<string, unknown>;
  state_key?: string;
};

type Room = {
  id: string;
  members: Set<string>;
  encrypted: boolean;
  /** Stream position at which the bot joined (null: not joined). */
  joinedAt: number | null;
  left: boolean;
  events: Array<{ pos: number; event: RoomEvent }>;
};

export type MatrixSent = { roomId: string; txnId: string; eventId: string; content: Record<string, unknown> };
type Route = 'sync' | 'send' | 'join' | 'leave' | 'messages' | 'typing' | 'members' | 'profile';

export type FakeMatrix = FakeHttp & {
  /** Every distinct message the bot sent (a resent transaction id adds nothing). */
  readonly sent: MatrixSent[];
  readonly typing: string[];
  readonly joins: string[];
  readonly leaves: string[];
  /** The `since` of each /sync (null: the first sync). */
  readonly syncs: Array<string | null>;
  /** A room with these members (the bot joined when `botJoined`, the default). */
  createRoom(options: { id: string; members: string[]; encrypted?: boolean; botJoined?: boolean }): void;
  /** `inviter` invites the bot into the room (created with them as its member when new). */
  invite(roomId: string, inviter: string, options?: { encrypted?: boolean }): void;
  /** A message event in the room; returns its event id. */
  message(roomId: string, sender: string, content: Record<string, unknown>): string;
  /** Any event (state or not) in the room's timeline. */
  event(
    roomId: string,
    event: Omit<RoomEvent, 'event_id' | 'origin_server_ts'> & { event_id?: string },
  ): string;
  /** The same event again, later in the stream (a homeserver sending it twice). */
  redeliver(roomId: string, eventId: string): void;
  failNext(route: Route, ...replies: FakeReply[]): void;
  calls(route: Route): RecordedRequest[];
  /** Resolves with the next message the bot sends. */
  nextSent(): Promise<MatrixSent>;
  /** The current stream position as a since token (`s<N>`). */
  position(): string;
};

export async function startFakeMatrix(): Promise<FakeMatrix> {
  const rooms = new Map<string, Room>();
  const invites: Array<{ pos: number; roomId: string; inviter: string }> = [];
  const sent: MatrixSent[] = [];
  const transactions = new Map<string, string>();
  const typing: string[] = [];
  const joins: string[] = [];
  const leaves: string[] = [];
  const syncs: Array<string | null> = [];
  const scripted = new Map<Route, FakeReply[]>();
  const sentListeners: Array<(sent: MatrixSent) => void> = [];
  let waiters: Array<() => void> = [];
  let pos = 0;
  let closed = false;

  const wake = () => {
    for (const waiter of waiters.splice(0)) waiter();
  };
  const roomOf = (id: string, members: string[] = []) => {
    let room = rooms.get(id);
    if (!room) {
      room = { id, members: new Set(members), encrypted: false, joinedAt: null, left: false, events: [] };
      rooms.set(id, room);
    }
    return room;
  };
  const append = (
    room: Room,
    event: Omit<RoomEvent, 'event_id' | 'origin_server_ts'> & { event_id?: string },
  ) => {
    pos++;
    const full: RoomEvent = { event_id: `$ev${pos}:fake.example`, origin_server_ts: Date.now(), ...event };
    room.events.push({ pos, event: full });
    wake();
    return full.event_id;
  };
  const stateEvents = (room: Room): RoomEvent[] => [
    ...(room.encrypted
      ? [
          {
            type: 'm.room.encryption',
            state_key: '',
            sender: [...room.members][0] ?? FAKE_MATRIX_BOT,
            event_id: `$enc:${room.id}`,
            origin_server_ts: 0,
            content: { algorithm: 'm.megolm.v1.aes-sha2' },
          },
        ]
      : []),
    ...[...room.members].map((member) => ({
      type: 'm.room.member',
      state_key: member,
      sender: member,
      event_id: `$member:${member}:${room.id}`,
      origin_server_ts: 0,
      content: { membership: 'join' },
    })),
  ];

  const timelineLimit = (filter: string | null) => {
    try {
      return (
        (JSON.parse(filter ?? '{}') as { room?: { timeline?: { limit?: number } } }).room?.timeline?.limit ??
        10
      );
    } catch {
      return 10;
    }
  };

  const syncBody = (since: number | null, limit: number) => {
    const join: Record<string, unknown> = {};
    const invite: Record<string, unknown> = {};
    for (const room of rooms.values()) {
      if (room.joinedAt === null || room.left) continue;
      const fresh = since === null || room.joinedAt > since;
      const events = room.events.filter(
        (entry) => (since === null || entry.pos > since) && entry.pos >= room.joinedAt!,
      );
      if (!fresh && events.length === 0) continue;
      const shown = events.slice(-limit);
      const limited = events.length > shown.length;
      join[room.id] = {
        ...(fresh ? { state: { events: stateEvents(room) } } : { state: { events: [] } }),
        timeline: {
          events: shown.map((entry) => entry.event),
          limited,
          prev_batch: `s${(shown[0]?.pos ?? pos + 1) - 1}`,
        },
        summary: fresh ? { 'm.joined_member_count': room.members.size } : {},
        ephemeral: { events: [] },
      };
    }
    for (const entry of invites) {
      const room = rooms.get(entry.roomId)!;
      if ((since !== null && entry.pos <= since) || room.joinedAt !== null || room.left) continue;
      invite[entry.roomId] = {
        invite_state: {
          events: [
            ...(room.encrypted
              ? [
                  {
                    type: 'm.room.encryption',
                    state_key: '',
                    sender: entry.inviter,
                    content: { algorithm: 'm.megolm.v1.aes-sha2' },
                  },
                ]
              : []),
            { type: 'm.room.name', state_key: '', sender: entry.inviter, content: { name: 'A room' } },
            {
              type: 'm.room.member',
              state_key: FAKE_MATRIX_BOT,
              sender: entry.inviter,
              content: { membership: 'invite' },
            },
          ],
        },
      };
    }
    return { next_batch: `s${pos}`, rooms: { join, invite, leave: {} }, account_data: { events: [] } };
  };

  const hasNews = (since: number) =>
    pos > since &&
    ([...rooms.values()].some(
      (room) => room.joinedAt !== null && !room.left && room.events.some((entry) => entry.pos > since),
    ) ||
      invites.some((entry) => entry.pos > since));

  const http = await startFakeHttp(async (request) => {
    if (request.headers.authorization !== `Bearer ${FAKE_MATRIX_TOKEN}`) {
      return { status: 401, json: { errcode: 'M_UNKNOWN_TOKEN', error: 'Invalid access token passed.' } };
    }
    const path = request.path.startsWith(PREFIX) ? request.path.slice(PREFIX.length) : request.path;
    if (path === '/account/whoami')
      return { status: 200, json: { user_id: FAKE_MATRIX_BOT, device_id: 'FAKE' } };
    const parts = path.split('/').map((part) => decodeURIComponent(part));
    const route: Route | null =
      path === '/sync'
        ? 'sync'
        : parts[1] === 'join'
          ? 'join'
          : parts[1] === 'rooms' && parts[3] === 'leave'
            ? 'leave'
            : parts[1] === 'rooms' && parts[3] === 'send'
              ? 'send'
              : parts[1] === 'rooms' && parts[3] === 'messages'
                ? 'messages'
                : parts[1] === 'rooms' && parts[3] === 'typing'
                  ? 'typing'
                  : parts[1] === 'rooms' && parts[3] === 'joined_members'
                    ? 'members'
                    : parts[1] === 'profile'
                      ? 'profile'
                      : null;
    if (route === 'sync') syncs.push(request.query.get('since'));
    const script = route ? scripted.get(route) : undefined;
    if (script?.length) return script.shift()!;
    switch (route) {
      case 'sync': {
        const sinceToken = request.query.get('since');
        const since = sinceToken ? Number(sinceToken.slice(1)) : null;
        const timeout = Math.min(Number(request.query.get('timeout') ?? 0), 30_000);
        if (since !== null && !hasNews(since) && timeout > 0 && !closed) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, timeout);
            waiters.push(() => {
              clearTimeout(timer);
              resolve();
            });
          });
        }
        return { status: 200, json: syncBody(since, timelineLimit(request.query.get('filter'))) };
      }
      case 'join': {
        const room = roomOf(parts[2]!);
        room.members.add(FAKE_MATRIX_BOT);
        joins.push(room.id);
        room.joinedAt = pos + 1;
        append(room, {
          type: 'm.room.member',
          state_key: FAKE_MATRIX_BOT,
          sender: FAKE_MATRIX_BOT,
          content: { membership: 'join' },
        });
        return { status: 200, json: { room_id: room.id } };
      }
      case 'leave': {
        const room = roomOf(parts[2]!);
        leaves.push(room.id);
        room.left = true;
        room.members.delete(FAKE_MATRIX_BOT);
        return { status: 200, json: {} };
      }
      case 'send': {
        const room = rooms.get(parts[2]!);
        if (!room || room.joinedAt === null || room.left) {
          return { status: 403, json: { errcode: 'M_FORBIDDEN', error: 'User not in room' } };
        }
        const txnId = parts[5]!;
        const known = transactions.get(txnId);
        if (known) return { status: 200, json: { event_id: known } };
        const content = request.body ?? {};
        const eventId = append(room, { type: 'm.room.message', sender: FAKE_MATRIX_BOT, content });
        transactions.set(txnId, eventId);
        const message = { roomId: room.id, txnId, eventId, content };
        sent.push(message);
        for (const listener of sentListeners.splice(0)) listener(message);
        return { status: 200, json: { event_id: eventId } };
      }
      case 'messages': {
        const room = rooms.get(parts[2]!);
        if (!room) return { status: 404, json: { errcode: 'M_NOT_FOUND', error: 'Unknown room' } };
        const from = Number((request.query.get('from') ?? `s${pos}`).slice(1));
        const to = Number((request.query.get('to') ?? 's0').slice(1));
        const limit = Number(request.query.get('limit') ?? 10);
        const older = room.events
          .filter((entry) => entry.pos <= from && entry.pos > to)
          .reverse()
          .slice(0, limit);
        const oldest = older.at(-1)?.pos;
        const more =
          oldest !== undefined && room.events.some((entry) => entry.pos < oldest && entry.pos > to);
        return {
          status: 200,
          json: {
            chunk: older.map((entry) => entry.event),
            start: `s${from}`,
            ...(more ? { end: `s${oldest! - 1}` } : {}),
          },
        };
      }
      case 'typing':
        typing.push(parts[2]!);
        return { status: 200, json: {} };
      case 'members': {
        const room = rooms.get(parts[2]!);
        return {
          status: 200,
          json: {
            joined: Object.fromEntries(
              [...(room?.members ?? [])].map((member) => [member, { display_name: null }]),
            ),
          },
        };
      }
      case 'profile':
        return { status: 200, json: { displayname: 'Steward' } };
      default:
        return { status: 404, json: { errcode: 'M_UNRECOGNIZED', error: 'Unrecognized request' } };
    }
  });

  return {
    ...http,
    sent,
    typing,
    joins,
    leaves,
    syncs,
    createRoom: ({ id, members, encrypted, botJoined }) => {
      const room = roomOf(id, members);
      room.encrypted = encrypted ?? false;
      if (botJoined ?? true) {
        room.members.add(FAKE_MATRIX_BOT);
        room.joinedAt = pos;
      }
    },
    invite: (roomId, inviter, options = {}) => {
      const room = roomOf(roomId, [inviter]);
      room.encrypted = options.encrypted ?? room.encrypted;
      pos++;
      invites.push({ pos, roomId, inviter });
      wake();
    },
    message: (roomId, sender, content) => append(roomOf(roomId), { type: 'm.room.message', sender, content }),
    event: (roomId, event) => append(roomOf(roomId), event),
    redeliver: (roomId, eventId) => {
      const room = roomOf(roomId);
      const original = room.events.find((entry) => entry.event.event_id === eventId);
      if (!original) throw new Error(`fake Matrix: no event ${eventId} in ${roomId}`);
      pos++;
      room.events.push({ pos, event: original.event });
      wake();
    },
    failNext: (route, ...replies) => scripted.set(route, [...(scripted.get(route) ?? []), ...replies]),
    calls: (route) =>
      http.requests.filter((request) => {
        const path = request.path.slice(PREFIX.length);
        if (route === 'sync') return path === '/sync';
        if (route === 'join') return path.startsWith('/join/');
        if (route === 'profile') return path.startsWith('/profile/');
        const segment = route === 'members' ? 'joined_members' : route;
        return path.startsWith('/rooms/') && path.split('/')[3] === segment;
      }),
    nextSent: () => new Promise((resolve) => sentListeners.push(resolve)),
    position: () => `s${pos}`,
    close: async () => {
      closed = true;
      wake();
      waiters = [];
      await http.close();
    },
  };
}

/** An m.text message's content, as Element sends it. */
export function matrixText(body: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { msgtype: 'm.text', body, ...extra };
}
