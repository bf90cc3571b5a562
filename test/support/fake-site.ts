import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/*
 * A real web site on a random loopback port, for web.fetch: fixed pages, redirects, a page that
 * streams far more than any limit (recording how much it managed to send before the reader hung
 * up), and a page that never answers.
 */

export type SitePage =
  | { status?: number; type: string; body: string | Uint8Array; headers?: Record<string, string> }
  | { redirect: string; status?: number }
  /** `chunk` written `times` times, as fast as the reader takes it. */
  | { stream: { chunk: string; times: number; type: string } }
  | { hang: true };

/** `closed`: the reader hung up; `finished`: every byte was sent. */
export type StreamRecord = { written: number; total: number; finished: boolean; closed: boolean };

export type FakeSite = {
  readonly url: string;
  /** Paths requested, in order. */
  readonly requests: string[];
  /** What each streaming page sent, by path. */
  readonly streams: Map<string, StreamRecord>;
  close(): Promise<void>;
};

export async function startFakeSite(pages: Record<string, SitePage>): Promise<FakeSite> {
  const requests: string[] = [];
  const streams = new Map<string, StreamRecord>();
  const open = new Set<ServerResponse>();
  const server = createServer((request, response) => {
    const path = request.url ?? '/';
    requests.push(path);
    const page = pages[path];
    if (!page) {
      response.writeHead(404, { 'content-type': 'text/html' });
      response.end('<html><body><h1>Not found</h1></body></html>');
      return;
    }
    if ('hang' in page) {
      open.add(response);
      return;
    }
    if ('redirect' in page) {
      response.writeHead(page.status ?? 302, { location: page.redirect });
      response.end();
      return;
    }
    if ('stream' in page) {
      const { chunk, times, type } = page.stream;
      const record: StreamRecord = {
        written: 0,
        total: Buffer.byteLength(chunk) * times,
        finished: false,
        closed: false,
      };
      streams.set(path, record);
      response.writeHead(200, { 'content-type': type });
      let left = times;
      response.on('close', () => {
        record.closed = true;
      });
      const pump = () => {
        while (left > 0 && !record.closed) {
          left--;
          record.written += Buffer.byteLength(chunk);
          if (!response.write(chunk)) {
            response.once('drain', pump);
            return;
          }
        }
        if (!record.closed) {
          record.finished = true;
          response.end();
        }
      };
      pump();
      return;
    }
    response.writeHead(page.status ?? 200, { 'content-type': page.type, ...page.headers });
    response.end(typeof page.body === 'string' ? page.body : Buffer.from(page.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    streams,
    close: () =>
      new Promise<void>((resolve) => {
        for (const response of open) response.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
