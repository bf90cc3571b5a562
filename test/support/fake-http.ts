import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';

/* A real HTTP server on a random port that records every request, for the fake platform APIs. */

export type RecordedRequest = {
  method: string;
  path: string;
  query: URLSearchParams;
  /** Lower-cased names. */
  headers: Record<string, string>;
  raw: string;
  /** The body's bytes (multipart uploads, audio). */
  bytes: Buffer;
  /** JSON or form body, parsed; null when empty or unparseable. */
  body: Record<string, unknown> | null;
  at: number;
};

export type FakeReply =
  | { status: number; json?: unknown; headers?: Record<string, string> }
  /** A binary answer (a file download, audio). */
  | { status: number; bytes: Uint8Array; headers?: Record<string, string> }
  /** An HTML page (what a gateway in front of an API sends during an outage). */
  | { status: number; html: string; headers?: Record<string, string> }
  /** Never answers (until the server closes): the client's timeout decides. */
  | { hang: true };

export type FakeHttp = {
  readonly url: string;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
};

function parseBody(raw: string, contentType: string): Record<string, unknown> | null {
  if (!raw) return null;
  try {
    if (contentType.includes('application/x-www-form-urlencoded')) {
      return Object.fromEntries(new URLSearchParams(raw));
    }
    return JSON.parse(raw) as Record<string, unknown>;
  } catch {
    return null;
  }
}

async function readRequest(request: IncomingMessage): Promise<RecordedRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const bytes = Buffer.concat(chunks);
  const raw = bytes.toString('utf8');
  const url = new URL(request.url ?? '/', 'http://fake');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === 'string') headers[name.toLowerCase()] = value;
  }
  return {
    method: request.method ?? 'GET',
    path: url.pathname,
    query: url.searchParams,
    headers,
    raw,
    bytes,
    body: parseBody(raw, headers['content-type'] ?? ''),
    at: Date.now(),
  };
}

const STATUS_TEXT: Record<number, string> = {
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Temporarily Unavailable',
  504: 'Gateway Time-out',
};

/** The HTML error page nginx (in front of an API) answers while its upstream is down. */
export function gatewayErrorPage(status: number, headers?: Record<string, string>): FakeReply {
  const title = `${status} ${STATUS_TEXT[status] ?? 'Error'}`;
  return {
    status,
    html: `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`,
    ...(headers ? { headers } : {}),
  };
}

/** Starts a server answering each request with `route`'s reply; a hanging reply holds its socket. */
export async function startFakeHttp(
  route: (request: RecordedRequest) => FakeReply | Promise<FakeReply>,
  options: {
    /** Takes WebSocket upgrade requests (a fake whose API and socket share one port). */
    upgrade?: (request: IncomingMessage, socket: Duplex, head: Buffer) => void;
  } = {},
): Promise<FakeHttp> {
  const requests: RecordedRequest[] = [];
  const hanging = new Set<ServerResponse>();
  const server = createServer((incoming, response) => {
    void (async () => {
      const request = await readRequest(incoming);
      requests.push(request);
      let reply: FakeReply;
      try {
        reply = await route(request);
      } catch (error) {
        reply = { status: 500, json: { error: String(error) } };
      }
      if ('hang' in reply) {
        hanging.add(response);
        return;
      }
      if ('html' in reply) {
        response.writeHead(reply.status, { 'content-type': 'text/html', ...reply.headers });
        response.end(reply.html);
        return;
      }
      if ('bytes' in reply) {
        response.writeHead(reply.status, { 'content-type': 'application/octet-stream', ...reply.headers });
        response.end(Buffer.from(reply.bytes));
        return;
      }
      response.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      response.end(reply.json === undefined ? '' : JSON.stringify(reply.json));
    })();
  });
  if (options.upgrade) server.on('upgrade', options.upgrade);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const response of hanging) response.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
