import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { Writable } from 'node:stream';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.ts';
import { type Database, openPglite } from '../src/db/index.ts';
import { createLogger } from '../src/logging/logger.ts';
import { createServerApp } from '../src/server/index.ts';

let database: Database;
beforeAll(async () => {
  database = await openPglite(null, { template: false });
});
afterAll(async () => {
  await database.close();
});

it('logs an upload the client aborts once per request, below error level and without a stack', async () => {
  const lines: Array<{ level: number; msg: string; err?: { stack?: string } }> = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const logger = createLogger({ level: 'debug', destination });
  const config = loadConfig({ env: {}, cwd: process.cwd() });
  const uploads = new Hono();
  uploads.post('/upload', async (c) => c.json({ bytes: (await c.req.arrayBuffer()).byteLength }));
  const app = createServerApp({ database, logger, config: () => config, routes: [uploads] });
  const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      await new Promise<void>((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () => {
          socket.write(
            'POST /upload HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/octet-stream\r\nContent-Length: 100000\r\n\r\n',
          );
          socket.write('x'.repeat(1000), () => setTimeout(() => socket.destroy(), 100));
        });
        socket.on('close', () => resolve());
        socket.on('error', reject);
      });
    }
    const started = Date.now();
    while (lines.filter((line) => /closed the connection/.test(line.msg)).length < 3) {
      if (Date.now() - started > 10_000) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
    const aborted = lines.filter((line) => /closed the connection/.test(line.msg));
    expect(aborted).toHaveLength(3);
    for (const line of aborted) {
      expect(line.level).toBeLessThanOrEqual(30);
      expect(JSON.stringify(line)).not.toContain('stack');
    }
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
