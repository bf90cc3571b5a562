import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import { type FakeHttp, type FakeReply, type RecordedRequest, startFakeHttp } from './fake-http.ts';

/*
 * A fake Discord: the REST API under `/api/v10` (GET /gateway/bot, POST /channels/{id}/messages,
 * POST /channels/{id}/typing, POST /users/@me/channels), bot-token checked, and a Gateway — a
 * `ws` WebSocket server speaking the Gateway protocol: HELLO with the heartbeat interval,
 * heartbeat ACKs, IDENTIFY → READY, RESUME → replay of the events after the given sequence →
 * RESUMED, dispatches with sequence numbers, and on demand op 7 (reconnect), op 9 (invalid
 * session), a dropped connection and unanswered heartbeats. Messages the bot posts come back
 * as MESSAGE_CREATE, as on Discord.
 */

/** The bot's user id is the first part of its token, base64-encoded (as Discord's tokens are). */
export const FAKE_DISCORD_BOT_ID = '1180000000000000001';
export const FAKE_DISCORD_TOKEN = `${Buffer.from(FAKE_DISCORD_BOT_ID).toString('base64')}.GfakeT.fake-discord-token-for-tests`;

export type DiscordPost = {
  channel_id: string;
  content: string;
  message_reference?: { message_id: string };
  allowed_mentions?: unknown;
  id: string;
};

type Frame = { op: number; d?: unknown; s?: number | null; t?: string | null };
type Session = { id: string; events: Array<{ s: number; t: string; d: unknown }>; sequence: number };

export type FakeDiscord = FakeHttp & {
  /** DISCORD_API_URL (ends with /api/v10). */
  readonly apiUrl: string;
  /** DISCORD_GATEWAY_URL. */
  readonly gatewayUrl: string;
  readonly posts: DiscordPost[];
  readonly typing: string[];
  readonly identifies: Array<{ token: string; intents: number }>;
  readonly resumes: Array<{ session_id: string; seq: number; accepted: boolean }>;
  /** Heartbeats received, each with the sequence it carried and when. */
  readonly heartbeats: Array<{ d: number | null; at: number }>;
  /** Connections opened (the first identifies, later ones resume or identify again). */
  connections(): number;
  /** Sends a dispatch in the current session (buffered for a resume when nobody is connected). */
  dispatch(event: string, data: unknown): number;
  /** The sequence of the last dispatch sent in the current session (0 before any). */
  sequence(): number;
  /** Op 7: asks the client to reconnect and resume. */
  requestReconnect(): void;
  /** Op 9 with d=false: the session cannot be resumed; the client must identify again. */
  invalidateSession(): void;
  /** Closes the socket without a close frame (a network failure). */
  dropConnection(): void;
  /** Stops answering heartbeats (a zombie connection), or starts again. */
  ackHeartbeats(on: boolean): void;
  /** Forgets every session (as after Discord's resume window), so a resume is refused with op 9. */
  forgetSessions(): void;
  failNext(route: 'messages' | 'typing' | 'gateway', ...replies: FakeReply[]): void;
  calls(route: 'messages' | 'typing' | 'gateway' | 'dm'): RecordedRequest[];
  nextPost(): Promise<DiscordPost>;
  /** Waits until a client is connected and past READY or RESUMED. */
  ready(): Promise<void>;
  /** Waits for a heartbeat carrying a sequence: the client has taken in READY and keeps its session. */
  sessionTaken(): Promise<void>;
};

export async function startFakeDiscord(options: { heartbeatIntervalMs?: number } = {}): Promise<FakeDiscord> {
  const heartbeatInterval = options.heartbeatIntervalMs ?? 45_000;
  const posts: DiscordPost[] = [];
  const typing: string[] = [];
  const identifies: FakeDiscord['identifies'] = [];
  const resumes: FakeDiscord['resumes'] = [];
  const heartbeats: FakeDiscord['heartbeats'] = [];
  const scripted = new Map<string, FakeReply[]>();
  const sessions = new Map<string, Session>();
  const postListeners: Array<(post: DiscordPost) => void> = [];
  let readyListeners: Array<() => void> = [];
  let current: { socket: WebSocket; session: Session | null; live: boolean } | null = null;
  let lastSession: Session | null = null;
  let acks = true;
  let connections = 0;
  let nextId = 1_200_000_000_000_000_000n;
  const snowflake = () => String(nextId++);

  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const gatewayUrl = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;

  const send = (socket: WebSocket, frame: Frame) => socket.send(JSON.stringify(frame));
  const markReady = () => {
    for (const listener of readyListeners.splice(0)) listener();
  };

  wss.on('connection', (socket) => {
    connections++;
    const connection = { socket, session: null as Session | null, live: false };
    current = connection;
    send(socket, { op: 10, d: { heartbeat_interval: heartbeatInterval } });
    socket.on('message', (raw) => {
      const frame = JSON.parse(String(raw)) as Frame;
      if (frame.op === 1) {
        heartbeats.push({ d: (frame.d as number | null) ?? null, at: Date.now() });
        if (acks) send(socket, { op: 11 });
      } else if (frame.op === 2) {
        const data = frame.d as { token: string; intents: number };
        identifies.push({ token: data.token, intents: data.intents });
        if (data.token !== FAKE_DISCORD_TOKEN) {
          socket.close(4004, 'Authentication failed.');
          return;
        }
        const session: Session = { id: randomUUID().replaceAll('-', ''), events: [], sequence: 0 };
        sessions.set(session.id, session);
        connection.session = session;
        lastSession = session;
        const s = ++session.sequence;
        const ready = {
          v: 10,
          user: {
            id: FAKE_DISCORD_BOT_ID,
            username: 'steward',
            discriminator: '0',
            bot: true,
            global_name: null,
          },
          guilds: [],
          session_id: session.id,
          resume_gateway_url: `${gatewayUrl}/resume`,
          shard: [0, 1],
          application: { id: FAKE_DISCORD_BOT_ID, flags: 0 },
        };
        session.events.push({ s, t: 'READY', d: ready });
        send(socket, { op: 0, t: 'READY', s, d: ready });
        connection.live = true;
        markReady();
      } else if (frame.op === 6) {
        const data = frame.d as { token: string; session_id: string; seq: number };
        const session = sessions.get(data.session_id);
        resumes.push({ session_id: data.session_id, seq: data.seq, accepted: Boolean(session) });
        if (!session || data.token !== FAKE_DISCORD_TOKEN) {
          send(socket, { op: 9, d: false });
          return;
        }
        connection.session = session;
        for (const event of session.events.filter((event) => event.s > data.seq)) {
          send(socket, { op: 0, t: event.t, s: event.s, d: event.d });
        }
        const s = ++session.sequence;
        session.events.push({ s, t: 'RESUMED', d: null });
        send(socket, { op: 0, t: 'RESUMED', s, d: null });
        connection.live = true;
        markReady();
      }
    });
    socket.on('close', () => {
      if (current === connection) current = null;
    });
  });

  const dispatch = (event: string, data: unknown): number => {
    const session = current?.session ?? lastSession;
    if (!session) throw new Error('fake Discord: no session to dispatch in (nobody identified yet)');
    const s = ++session.sequence;
    session.events.push({ s, t: event, d: data });
    if (current?.live && current.session === session) send(current.socket, { op: 0, t: event, s, d: data });
    return s;
  };

  const http = await startFakeHttp((request) => {
    if (request.headers.authorization !== `Bot ${FAKE_DISCORD_TOKEN}`) {
      return { status: 401, json: { message: '401: Unauthorized', code: 0 } };
    }
    if (request.path === '/api/v10/users/@me' && request.method === 'GET') {
      return { status: 200, json: { id: FAKE_DISCORD_BOT_ID, username: 'steward', bot: true } };
    }
    const messages = /^\/api\/v10\/channels\/(\d+)\/messages$/.exec(request.path);
    const typingMatch = /^\/api\/v10\/channels\/(\d+)\/typing$/.exec(request.path);
    const route =
      request.path === '/api/v10/gateway/bot'
        ? 'gateway'
        : messages
          ? 'messages'
          : typingMatch
            ? 'typing'
            : request.path === '/api/v10/users/@me/channels'
              ? 'dm'
              : null;
    const script = route ? scripted.get(route) : undefined;
    if (script?.length) return script.shift()!;
    if (route === 'gateway') {
      return {
        status: 200,
        json: {
          url: 'wss://gateway.discord.gg',
          shards: 1,
          session_start_limit: { total: 1000, remaining: 999, reset_after: 14_400_000, max_concurrency: 1 },
        },
      };
    }
    if (route === 'typing' && request.method === 'POST') {
      typing.push(typingMatch![1]!);
      return { status: 204, bytes: new Uint8Array() };
    }
    if (route === 'dm' && request.method === 'POST') {
      const recipient = String(request.body?.recipient_id);
      return {
        status: 200,
        json: { id: `9${recipient.slice(1)}`, type: 1, recipients: [{ id: recipient }] },
      };
    }
    if (route === 'messages' && request.method === 'POST') {
      const body = request.body ?? {};
      const content = String(body.content ?? '');
      if (content.length > 2000) {
        return {
          status: 400,
          json: {
            message: 'Invalid Form Body',
            code: 50035,
            errors: { content: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] } },
          },
        };
      }
      const id = snowflake();
      const post: DiscordPost = {
        channel_id: messages![1]!,
        content,
        id,
        ...(body.message_reference
          ? { message_reference: body.message_reference as { message_id: string } }
          : {}),
        ...(body.allowed_mentions ? { allowed_mentions: body.allowed_mentions } : {}),
      };
      posts.push(post);
      for (const listener of postListeners.splice(0)) listener(post);
      const message = discordMessage({
        id,
        channelId: post.channel_id,
        authorId: FAKE_DISCORD_BOT_ID,
        bot: true,
        content,
      });
      // Discord sends the bot its own messages too.
      if (lastSession) dispatch('MESSAGE_CREATE', message);
      return { status: 200, json: message };
    }
    return { status: 404, json: { message: '404: Not Found', code: 0 } };
  });

  return {
    ...http,
    apiUrl: `${http.url}/api/v10`,
    gatewayUrl,
    posts,
    typing,
    identifies,
    resumes,
    heartbeats,
    connections: () => connections,
    dispatch,
    sequence: () => (current?.session ?? lastSession)?.sequence ?? 0,
    requestReconnect: () => {
      if (!current) return;
      // Nothing more is sent on a connection Discord asked to leave: it waits for the resume.
      current.live = false;
      send(current.socket, { op: 7, d: null });
    },
    invalidateSession: () => {
      if (current) send(current.socket, { op: 9, d: false });
    },
    dropConnection: () => {
      if (current) {
        current.live = false;
        current.socket.terminate();
      }
    },
    ackHeartbeats: (on) => {
      acks = on;
    },
    forgetSessions: () => sessions.clear(),
    failNext: (route, ...replies) => scripted.set(route, [...(scripted.get(route) ?? []), ...replies]),
    calls: (route) =>
      http.requests.filter((request) =>
        route === 'gateway'
          ? request.path === '/api/v10/gateway/bot'
          : route === 'dm'
            ? request.path === '/api/v10/users/@me/channels'
            : request.path.endsWith(`/${route}`),
      ),
    nextPost: () => new Promise((resolve) => postListeners.push(resolve)),
    ready: () =>
      current?.live ? Promise.resolve() : new Promise<void>((resolve) => readyListeners.push(resolve)),
    sessionTaken: async () => {
      const deadline = Date.now() + 10_000;
      while (!heartbeats.some((beat) => beat.d !== null)) {
        if (Date.now() > deadline) throw new Error('fake Discord: no heartbeat with a sequence within 10 s');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    close: async () => {
      readyListeners = [];
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await http.close();
    },
  };
}

/** A MESSAGE_CREATE's data, with the fields Discord sends (a guild message has guild_id and member). */
export function discordMessage(options: {
  id: string;
  channelId: string;
  authorId: string;
  content: string;
  username?: string;
  bot?: boolean;
  guildId?: string;
  mentions?: string[];
  type?: number;
  attachments?: unknown[];
}): Record<string, unknown> {
  return {
    type: options.type ?? 0,
    tts: false,
    timestamp: new Date().toISOString(),
    pinned: false,
    mentions: (options.mentions ?? []).map((id) => ({
      id,
      username: id === FAKE_DISCORD_BOT_ID ? 'steward' : `user${id.slice(-4)}`,
      global_name: null,
      discriminator: '0',
      avatar: null,
      public_flags: 0,
      ...(id === FAKE_DISCORD_BOT_ID ? { bot: true } : {}),
    })),
    mention_roles: [],
    mention_everyone: false,
    id: options.id,
    flags: 0,
    embeds: [],
    edited_timestamp: null,
    content: options.content,
    components: [],
    channel_id: options.channelId,
    author: {
      id: options.authorId,
      username: options.username ?? `user${options.authorId.slice(-4)}`,
      global_name: options.username ?? null,
      discriminator: '0',
      avatar: null,
      public_flags: 0,
      ...(options.bot ? { bot: true } : {}),
    },
    attachments: options.attachments ?? [],
    ...(options.guildId
      ? {
          guild_id: options.guildId,
          member: {
            roles: [],
            premium_since: null,
            pending: false,
            nick: null,
            mute: false,
            joined_at: '2024-05-01T10:00:00.000000+00:00',
            flags: 0,
            deaf: false,
            communication_disabled_until: null,
            avatar: null,
          },
        }
      : {}),
  };
}

/** GUILD_MESSAGES | DIRECT_MESSAGES | MESSAGE_CONTENT: what Steward must identify with. */
export const DISCORD_INTENTS_EXPECTED = (1 << 9) | (1 << 12) | (1 << 15);
