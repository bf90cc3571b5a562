import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { type AuthEnv, createServerApp, usageRoutes } from '../../src/server/index.ts';
import type { TaskContext } from '../../src/tasks/index.ts';
import type { Backend } from './db.ts';
import type { FakeLlm } from './fake-llm.ts';
import { startTestSteward, type TestSteward, useScriptedSteward } from './steward.ts';

export const OWNER_TOKEN = 'owner-token-0123456789abcdef';

/** `close()` and `stop()` both stop the server, then the runtime. */
export type WebSteward = TestSteward & {
  url: string;
  /** The same app, for in-process `app.request()`. */
  app: Hono;
  stop(): Promise<void>;
};

export type WebStewardOptions = { extraYaml?: string; logFile?: string };

/** A full runtime in this process with the web routes on a real port (the owner token set). */
export async function startWebSteward(
  backend: Backend,
  fake: FakeLlm,
  options: WebStewardOptions = {},
): Promise<WebSteward> {
  const steward = await startTestSteward(backend, fake, {
    extraYaml: `api_token: "${OWNER_TOKEN}"\n${options.extraYaml ?? ''}`,
    ...(options.logFile ? { runtime: { logFile: options.logFile } } : {}),
  });
  const { runtime } = steward;
  const { app } = await runtime.http();
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const made = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(made));
  });
  const { port } = server.address() as AddressInfo;
  const stop = async () => {
    await new Promise<void>((resolve) => {
      (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      server.close(() => resolve());
    });
    await steward.close();
  };
  return { ...steward, url: `http://127.0.0.1:${port}`, app, stop, close: stop };
}

/** useTestSteward for startWebSteward. */
export function useWebSteward(backend: Backend, fake: FakeLlm, options: WebStewardOptions = {}): WebSteward {
  const timeouts = { startMs: 180_000, stopMs: 120_000 };
  return useScriptedSteward(fake, () => startWebSteward(backend, fake, options), timeouts);
}

/** The local owner's task context on `database` (the clock real), for seeding the dashboard's tasks. */
export function ownerTaskContext(database: TaskContext['database']): TaskContext {
  return {
    database,
    userId: 'local',
    timezone: 'UTC',
    actor: 'user:local',
    executionId: null,
    now: () => new Date(),
  };
}

/** A cookie-keeping client for the dashboard, logged in with `token`. */
export async function loginAs(
  url: string,
  token: string,
): Promise<{
  cookie: string;
  csrf: string;
  get(path: string): Promise<Response>;
  post(path: string, form: Record<string, string>): Promise<Response>;
}> {
  const response = await fetch(`${url}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token }),
    redirect: 'manual',
  });
  if (response.status !== 303) throw new Error(`login answered ${response.status}`);
  const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0]!;
  const get = (path: string) => fetch(`${url}${path}`, { headers: { cookie }, redirect: 'manual' });
  const chat = await (await get('/chat')).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(chat)?.[1] ?? '';
  return {
    cookie,
    csrf,
    get,
    post: (path, form) =>
      fetch(`${url}${path}`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf, ...form }),
        redirect: 'manual',
      }),
  };
}

/** The server app (its auth in front) with only `/api/usage` behind it, on `steward`'s runtime. */
export function usageApiApp(steward: TestSteward): Hono {
  const api = new Hono<AuthEnv>();
  api.route('/', usageRoutes({ database: steward.db.database }));
  return createServerApp({
    database: steward.db.database,
    logger: steward.runtime.logger,
    config: () => steward.runtime.config.get(),
    api,
  });
}
