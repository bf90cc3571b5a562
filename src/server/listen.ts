import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';
import { ConfigError, StewardError } from '../errors.ts';
import { isLoopbackHost } from './auth.ts';

export type RunningServer = {
  port: number;
  host: string;
  /** Stops listening and lets open requests finish for up to `graceMs` before cutting them. */
  close(graceMs?: number): Promise<void>;
};

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
          close: (graceMs = 0) =>
            new Promise<void>((done) => {
              const http = server as {
                closeAllConnections?: () => void;
                closeIdleConnections?: () => void;
              };
              const force = setTimeout(() => http.closeAllConnections?.(), graceMs);
              server.close(() => {
                clearTimeout(force);
                done();
              });
              http.closeIdleConnections?.();
              if (graceMs === 0) http.closeAllConnections?.();
            }),
        });
      },
    );
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenProblem(error, options)));
  });
}

/** A port in use, a privileged port, a foreign address: one line with the fix. */
function listenProblem(error: NodeJS.ErrnoException, options: { host: string; port: number }): Error {
  if (error.code !== 'EADDRINUSE' && error.code !== 'EACCES' && error.code !== 'EADDRNOTAVAIL') return error;
  const what =
    error.code === 'EADDRINUSE'
      ? `port ${options.port} on ${options.host} is already in use`
      : error.code === 'EACCES'
        ? `port ${options.port} needs privileges this user lacks`
        : `${options.host} is not an address of this machine`;
  const fix =
    error.code === 'EADDRNOTAVAIL'
      ? 'set HOST to one of its addresses (127.0.0.1 for this machine only)'
      : 'set PORT to a free port (e.g. PORT=8788), or stop what holds it';
  return new StewardError('listen_failed', `Cannot listen: ${what}: ${fix}.`, { cause: error });
}

/**
 * Fails fast, before the database and runtime start, when the address cannot be listened on
 * (the real listen still reports a port taken in between).
 */
export async function assertCanListen(options: { host: string; port: number }): Promise<void> {
  if (options.port === 0) return;
  const { createServer } = await import('node:net');
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => reject(listenProblem(error, options)));
    probe.listen(options.port, options.host, () => probe.close(() => resolve()));
  });
}
