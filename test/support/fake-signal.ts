import { randomUUID } from 'node:crypto';
import { type WebSocket, WebSocketServer } from 'ws';
import { type FakeHttp, type FakeReply, type RecordedRequest, startFakeHttp } from './fake-http.ts';

/*
 * A fake bbernhard/signal-cli-rest-api: `GET /v1/about` with its mode; in `json-rpc` mode the
 * WebSocket at `/v1/receive/{number}` pushes each envelope once (as signal-cli does, which
 * acknowledges to Signal on hand-over); in `normal` mode `GET /v1/receive/{number}?timeout=N`
 * waits up to N seconds and hands over (and forgets) what is queued. `POST /v2/send`,
 * typing indicators and attachments as the real API answers them. Envelopes have the shape
 * signal-cli prints (source, sourceNumber, sourceUuid, sourceName, timestamp, dataMessage).
 */

export const FAKE_SIGNAL_NUMBER = '+15550100000';

export type SignalSent = {
  recipients: string[];
  message: string;
  textMode: string | null;
  timestamp: number;
};
type Route = 'send' | 'receive' | 'typing' | 'attachments' | 'about';

export type FakeSignal = FakeHttp & {
  readonly mode: 'json-rpc' | 'normal';
  readonly sent: SignalSent[];
  /** Recipients of each typing indicator shown. */
  readonly typing: string[];
  /** WebSocket connections opened so far (json-rpc mode). */
  connections(): number;
  /** A direct message from `from`; returns the frame (to deliver it again). */
  message(
    from: string,
    text: string | null,
    options?: { name?: string; attachments?: Array<Record<string, unknown>>; group?: boolean },
  ): Record<string, unknown>;
  /** Any frame (a redelivery, a receipt, something malformed). */
  deliver(frame: unknown): void;
  /** Stores bytes served at `/v1/attachments/{id}`; returns the id. */
  addAttachment(bytes: Uint8Array, extension: string): string;
  /** Closes the open WebSockets (signal-cli restarting). */
  dropSockets(): void;
  failNext(route: Route, ...replies: FakeReply[]): void;
  calls(route: Route): RecordedRequest[];
};

export async function startFakeSignal(options: { mode?: 'json-rpc' | 'normal' } = {}): Promise<FakeSignal> {
  const mode = options.mode ?? 'json-rpc';
  const sent: SignalSent[] = [];
  const typing: string[] = [];
  const queue: unknown[] = [];
  const attachments = new Map<string, Uint8Array>();
  const scripted = new Map<Route, FakeReply[]>();
  const sockets = new Set<WebSocket>();
  const waiters: Array<() => void> = [];
  let connections = 0;
  let clock = Date.UTC(2026, 10, 27, 12, 0, 0);
  const receivePath = `/v1/receive/${encodeURIComponent(FAKE_SIGNAL_NUMBER)}`;

  const routeOf = (request: RecordedRequest): Route | null => {
    if (request.path === '/v1/about') return 'about';
    if (request.path === '/v2/send') return 'send';
    if (request.path.startsWith('/v1/receive/')) return 'receive';
    if (request.path.startsWith('/v1/typing-indicator/')) return 'typing';
    if (request.path.startsWith('/v1/attachments/')) return 'attachments';
    return null;
  };
  const flush = () => {
    if (mode === 'json-rpc') {
      const [socket] = sockets;
      if (!socket) return;
      for (const frame of queue.splice(0)) socket.send(JSON.stringify(frame));
    }
    for (const waiter of waiters.splice(0)) waiter();
  };
  const deliver = (frame: unknown) => {
    queue.push(frame);
    flush();
  };

  const wss = new WebSocketServer({ noServer: true });
  wss.on('connection', (socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    flush();
  });

  const http = await startFakeHttp(
    async (request) => {
      const route = routeOf(request);
      if (!route) return { status: 404, json: { error: 'Not found' } };
      const failure = scripted.get(route)?.shift();
      if (failure) return failure;
      if (route === 'about') {
        return {
          status: 200,
          json: { versions: ['v1', 'v2'], build: 2, mode, version: '0.93', capabilities: {} },
        };
      }
      if (route === 'receive') {
        if (mode === 'json-rpc')
          return {
            status: 400,
            json: { error: 'websocket: the client is not using the websocket protocol' },
          };
        if (request.path !== receivePath) return { status: 400, json: { error: 'User is not registered' } };
        const seconds = Number(request.query.get('timeout') ?? '1');
        if (queue.length === 0) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, seconds * 1000);
            waiters.push(() => {
              clearTimeout(timer);
              resolve();
            });
          });
        }
        return { status: 200, json: queue.splice(0) };
      }
      if (route === 'send') {
        const body = request.body as {
          number?: string;
          recipients?: string[];
          message?: string;
          text_mode?: string;
        };
        if (body?.number !== FAKE_SIGNAL_NUMBER || !body.recipients?.length)
          return { status: 400, json: { error: "Couldn't process request - please provide a valid number" } };
        clock += 1000;
        sent.push({
          recipients: body.recipients,
          message: body.message ?? '',
          textMode: body.text_mode ?? null,
          timestamp: clock,
        });
        return { status: 201, json: { timestamp: String(clock) } };
      }
      if (route === 'typing') {
        if (request.method === 'PUT') typing.push(String(request.body?.recipient));
        return { status: 204, json: undefined };
      }
      const id = decodeURIComponent(request.path.slice('/v1/attachments/'.length));
      const bytes = attachments.get(id);
      return bytes
        ? { status: 200, bytes }
        : { status: 404, json: { error: 'No attachment with that name found' } };
    },
    {
      upgrade: (request, socket, head) => {
        if (mode !== 'json-rpc' || new URL(request.url ?? '/', 'http://fake').pathname !== receivePath) {
          socket.destroy();
          return;
        }
        wss.handleUpgrade(request, socket, head, (client) => wss.emit('connection', client, request));
      },
    },
  );

  return {
    ...http,
    mode,
    sent,
    typing,
    connections: () => connections,
    message(from, text, extra = {}) {
      clock += 1000;
      const frame = {
        envelope: {
          source: from,
          sourceNumber: from,
          sourceUuid: randomUUID(),
          sourceName: extra.name ?? 'Alice',
          sourceDevice: 1,
          timestamp: clock,
          serverReceivedTimestamp: clock + 20,
          serverDeliveredTimestamp: clock + 21,
          dataMessage: {
            timestamp: clock,
            message: text,
            expiresInSeconds: 0,
            viewOnce: false,
            ...(extra.attachments ? { attachments: extra.attachments } : {}),
            ...(extra.group ? { groupInfo: { groupId: 'Zm9vYmFyZ3JvdXA=', type: 'DELIVER' } } : {}),
          },
        },
        account: FAKE_SIGNAL_NUMBER,
      };
      deliver(frame);
      return frame;
    },
    deliver,
    addAttachment(bytes, extension) {
      const id = `${randomUUID().replaceAll('-', '').slice(0, 20)}.${extension}`;
      attachments.set(id, bytes);
      return id;
    },
    dropSockets() {
      for (const socket of sockets) socket.terminate();
    },
    failNext(route, ...replies) {
      scripted.set(route, [...(scripted.get(route) ?? []), ...replies]);
    },
    calls: (route) => http.requests.filter((request) => routeOf(request) === route),
    close: async () => {
      for (const waiter of waiters.splice(0)) waiter();
      for (const socket of sockets) socket.terminate();
      wss.close();
      await http.close();
    },
  };
}
