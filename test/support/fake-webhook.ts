import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/*
 * A fake incoming-webhook receiver (Google Chat's shape: POST JSON {text}) on a real port.
 * Records every request with its exact path and query; `down` makes it answer 503.
 */

export type ReceivedWebhook = {
  method: string;
  /** Path and query string exactly as requested. */
  url: string;
  contentType: string;
  body: unknown;
  receivedAt: number;
};

export type FakeWebhook = {
  /** Base URL, e.g. http://127.0.0.1:PORT */
  readonly url: string;
  readonly received: ReceivedWebhook[];
  /** Requests answered 2xx. */
  readonly delivered: ReceivedWebhook[];
  /** While true, every request is recorded and answered 503. */
  down: boolean;
  /** Resolves once `count` requests were answered 2xx (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  reset(): void;
  close(): Promise<void>;
};

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

export async function startFakeWebhook(): Promise<FakeWebhook> {
  const received: ReceivedWebhook[] = [];
  const delivered: ReceivedWebhook[] = [];
  const state = { down: false };
  const server = createServer(async (request, response) => {
    const text = await readBody(request);
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {}
    const entry: ReceivedWebhook = {
      method: request.method ?? '',
      url: request.url ?? '',
      contentType: request.headers['content-type'] ?? '',
      body,
      receivedAt: Date.now(),
    };
    received.push(entry);
    if (state.down) {
      response.writeHead(503, { 'content-type': 'application/json' });
      response.end('{"error":{"code":503,"message":"unavailable"}}');
      return;
    }
    delivered.push(entry);
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end('{"name":"spaces/AAA/messages/1"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    delivered,
    get down() {
      return state.down;
    },
    set down(value: boolean) {
      state.down = value;
    },
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (delivered.length < count) {
        if (Date.now() > deadline) {
          throw new Error(`expected ${count} webhook deliveries, got ${delivered.length}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return delivered;
    },
    reset() {
      received.length = 0;
      delivered.length = 0;
      state.down = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
