import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { errorMessage, networkCause } from './errors.ts';
import { redact } from './logging/index.ts';

const failure = (url: string) =>
  fetch(url).then(
    () => {
      throw new Error(`${url} answered`);
    },
    (error: unknown) => error,
  );

async function closedPort(): Promise<number> {
  const server = http.createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

it('turns "fetch failed" into the refused address and port', async () => {
  const port = await closedPort();
  const error = await failure(`http://127.0.0.1:${port}/v1/chat/completions`);
  expect(errorMessage(error)).toBe(
    `fetch failed: ECONNREFUSED 127.0.0.1:${port} (connection refused: nothing listens there)`,
  );
  // Logs show the same line, not the bare "fetch failed".
  expect(redact(error, [])).toMatchObject({
    message: expect.stringContaining(`ECONNREFUSED 127.0.0.1:${port}`),
  });
});

it('names a host name DNS does not know', async () => {
  const error = await failure('http://steward-no-such-host.invalid/');
  expect(errorMessage(error)).toMatch(
    /^fetch failed: (ENOTFOUND|EAI_AGAIN) steward-no-such-host\.invalid \(DNS/,
  );
});

it('names a TLS failure by its code and readable reason', async () => {
  const server = http.createServer((_request, response) => response.end('plain')).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    const error = await failure(`https://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    expect(errorMessage(error)).toBe('fetch failed: TLS ERR_SSL_WRONG_VERSION_NUMBER: wrong version number');
  } finally {
    server.close();
  }
});

it('lists each address happy eyeballs tried, and leaves other errors alone', () => {
  const tried = Object.assign(new AggregateError([]), {
    errors: [
      Object.assign(new Error('connect ECONNREFUSED ::1:4999'), {
        code: 'ECONNREFUSED',
        address: '::1',
        port: 4999,
      }),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4999'), {
        code: 'ECONNREFUSED',
        address: '127.0.0.1',
        port: 4999,
      }),
    ],
  });
  expect(networkCause(tried)).toBe(
    'ECONNREFUSED [::1]:4999 (connection refused: nothing listens there); ECONNREFUSED 127.0.0.1:4999 (connection refused: nothing listens there)',
  );
  expect(errorMessage(new Error('something else', { cause: tried }))).toBe('something else');
});
