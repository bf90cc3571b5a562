import type { Hono } from 'hono';
import { FailureLimiter } from '../../src/channels/failure-limiter.ts';
import { loadConfig } from '../../src/config/index.ts';
import { type Logger, silentLogger } from '../../src/logging/logger.ts';
import { createRuntime, type Runtime } from '../../src/runtime.ts';
import type { Backend, TestDatabase } from './db.ts';
import { type FakeLlm, useFakeLlm } from './fake-llm.ts';
import { FAKE_BOT_TOKEN, type FakeTelegram, startFakeTelegram } from './fake-telegram.ts';
import { startTestSteward, type TestSteward, writeTestConfig } from './steward.ts';
import { useStarted } from './use-started.ts';

export type ChannelSteward = TestSteward & {
  /** The HTTP app with /webhooks mounted, for `app.request()`. */
  app: Hono;
  post(path: string, body: string | object, headers?: Record<string, string>): Promise<Response>;
  /** Rows of a table owned by channels/ (tests only read them). */
  count(sql: string, params?: unknown[]): Promise<number>;
};

/**
 * A runtime with its channels started (workers, outbox, adapters) and the webhook app, on a
 * fresh database. `channelsYaml` is the `channels:` block of steward.yaml.
 */
export async function startChannelSteward(
  backend: Backend,
  fake: FakeLlm,
  channelsYaml: string,
  options: {
    limiter?: FailureLimiter;
    /** Where webhook requests are logged (default: silent). */
    logger?: Logger;
    onVerification?: (channel: string, result: 'verified' | 'rejected') => void;
  } = {},
): Promise<ChannelSteward> {
  const steward = await startTestSteward(backend, fake, {
    extraYaml: channelsYaml,
    runtime: {
      webhooks: {
        limiter: options.limiter ?? new FailureLimiter({ maxFailures: 1000 }),
        logger: options.logger ?? silentLogger(),
        ...(options.onVerification ? { onVerification: options.onVerification } : {}),
      },
    },
  });
  const { runtime } = steward;
  await runtime.jobs.start();
  await runtime.channels.start();
  const { app } = await runtime.http();
  return {
    ...steward,
    app,
    post: (path, body, headers = {}) =>
      Promise.resolve(
        app.request(path, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: typeof body === 'string' ? body : JSON.stringify(body),
        }),
      ),
    count: async (sql, params = []) => {
      const rows = await runtime.database.query<{ count: number }>(sql, params);
      return Number(rows[0]?.count ?? 0);
    },
  };
}

export type TelegramChannelOptions = {
  /** STEWARD_ALLOW entries (`telegram:1111`). */
  allow: string[];
  secret: string;
  /** Webhook mode behind this URL; without one, long polling. */
  publicUrl?: string;
};

/** The `channels:` block for Telegram on the fake `telegram`. */
export function telegramChannelYaml(telegram: FakeTelegram, options: TelegramChannelOptions): string {
  const publicUrl = options.publicUrl ? `  public_url: "${options.publicUrl}"\n` : '';
  const allow = options.allow.map((entry) => `"${entry}"`).join(', ');
  return `channels:
${publicUrl}  allow: [${allow}]
  telegram: { bot_token: "${FAKE_BOT_TOKEN}", webhook_secret: "${options.secret}", api_root: "${telegram.url}" }
`;
}

/**
 * For the enclosing `describe` block: a fake LLM, a fake Telegram and a channel Steward with
 * Telegram on it, started before its tests and closed after them.
 */
export function useTelegramSteward(
  backend: Backend,
  options: TelegramChannelOptions,
): { llm: FakeLlm; telegram: FakeTelegram; steward: ChannelSteward } {
  const llm = useFakeLlm();
  const telegram = useStarted(
    'the fake Telegram',
    () => startFakeTelegram(),
    (fake) => fake.close(),
  );
  const start = () => startChannelSteward(backend, llm, telegramChannelYaml(telegram, options));
  return { llm, telegram, steward: useStarted('the channel Steward', start, (steward) => steward.close()) };
}

/**
 * A runtime with `channelsYaml` on `database` (kept across restarts), talking to the fake LLM at
 * `llmUrl`, its jobs and channels started: for tests that stop Steward and start it again.
 */
export async function startChannelsRuntime(
  llmUrl: string,
  channelsYaml: string,
  database: TestDatabase['database'],
): Promise<Runtime> {
  const { dir, env } = writeTestConfig(llmUrl, channelsYaml);
  const runtime = await createRuntime(loadConfig({ env, cwd: dir }), { database, logger: silentLogger() });
  await runtime.jobs.start();
  await runtime.channels.start();
  return runtime;
}
