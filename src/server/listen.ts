import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';
import { ConfigError } from '../errors.ts';
import { isLoopbackHost } from './auth.ts';

export type RunningServer = { port: number; host: string; close(): Promise<void> };

/** Listens on host:port. Refuses a non-loopback address unless an API token protects /api. */
export function assertSafeBinding(host: string, apiToken: string | undefined): void {
  if (!isLoopbackHost(host) && !apiToken) {
    throw new ConfigError(
      'HOST',
      `refusing to listen on ${host} without STEWARD_API_TOKEN; set a token or use HOST=127.0.0.1`,
    );
  }
}

export async function listen(
  app: Hono,
  options: { host: string; port: number; apiToken?: string },
): Promise<RunningServer> {
  assertSafeBinding(options.host, options.apiToken);
  return new Promise((resolve, reject) => {
    const server = serve(
      { fetch: app.fetch, hostname: options.host, port: options.port },
      (info: AddressInfo) => {
        resolve({
          port: info.port,
          host: options.host,
          close: () =>
            new Promise<void>((done) => {
              server.close(() => done());
              (server as { closeAllConnections?: () => void }).closeAllConnections?.();
            }),
        });
      },
    );
    server.once('error', reject);
  });
}
