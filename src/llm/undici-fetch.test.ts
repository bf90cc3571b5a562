import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { undiciFetch } from './undici-fetch.ts';

/* What fetch does that undici's `request` does not, done by the fetch the SDK is given. */

const seen: Array<{ url: string; method: string; body: string; type: string | undefined }> = [];
const routes: Record<string, (response: ServerResponse) => void> = {
  '/moved': (response) => response.writeHead(308, { location: '/here' }).end(),
  '/see-other': (response) => response.writeHead(303, { location: '/here' }).end(),
  '/here': (response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('arrived'),
  '/gzip': (response) =>
    response
      .writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
      .end(gzipSync(JSON.stringify({ zipped: true }))),
  '/empty': (response) => response.writeHead(204).end(),
  '/cookies': (response) =>
    response
      .writeHead(200, [
        ['set-cookie', 'a=1'],
        ['set-cookie', 'b=2'],
      ])
      .end('ok'),
  '/slow': (response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write('data: first\n\n');
  },
};
const server = createServer((incoming: IncomingMessage, response: ServerResponse) => {
  let body = '';
  incoming.on('data', (chunk) => {
    body += chunk;
  });
  incoming.on('end', () => {
    seen.push({
      url: incoming.url!,
      method: incoming.method!,
      body,
      type: incoming.headers['content-type'],
    });
    routes[incoming.url!]!(response);
  });
});
let base = '';
const fetchLike = undiciFetch(request);

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('undiciFetch', () => {
  it('sends the method, headers and body, and sends a request again where a redirect points', async () => {
    seen.length = 0;
    const response = await fetchLike(`${base}/moved`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('arrived');
    expect(seen.map(({ url, method, body, type }) => [url, method, body, type])).toEqual([
      ['/moved', 'POST', '{"a":1}', 'application/json'],
      ['/moved', 'POST', '{"a":1}', 'application/json'],
      ['/here', 'POST', '{"a":1}', 'application/json'],
    ]);
  });

  it('answers a 303 as it came: the request was handled, and is not sent again', async () => {
    seen.length = 0;
    const response = await fetchLike(`${base}/see-other`, { method: 'POST', body: 'x' });
    expect(response.status).toBe(303);
    expect(seen.map((request) => request.url)).toEqual(['/see-other']);
  });

  it('decompresses a compressed answer, as fetch does', async () => {
    const response = await fetchLike(`${base}/gzip`);
    expect(response.headers.get('content-encoding')).toBeNull();
    expect(await response.json()).toEqual({ zipped: true });
  });

  it('gives no body for a 204 and keeps repeated headers', async () => {
    const empty = await fetchLike(`${base}/empty`);
    expect([empty.status, empty.body]).toEqual([204, null]);
    const cookies = await fetchLike(`${base}/cookies`);
    expect(cookies.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await cookies.text()).toBe('ok');
  });

  it('stops a stream when its signal aborts, with an AbortError', async () => {
    const controller = new AbortController();
    const response = await fetchLike(`${base}/slow`, { signal: controller.signal });
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: first\n\n');
    controller.abort();
    await expect(reader.read()).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('leaves what the SDK never sends (a form) to the global fetch', async () => {
    seen.length = 0;
    const form = new FormData();
    form.set('field', 'value');
    const response = await fetchLike(`${base}/here`, { method: 'POST', body: form });
    expect(await response.text()).toBe('arrived');
    expect(seen[0]!.type).toMatch(/^multipart\/form-data; boundary=/);
    expect(seen[0]!.body).toContain('name="field"');
  });
});
