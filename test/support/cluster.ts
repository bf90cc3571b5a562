import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { freePort, startServer } from './cli.ts';
import { createTestDatabase, type TestDatabase } from './db.ts';
import type { FakeLlm } from './fake-llm.ts';
import { FAKE_BOT_TOKEN } from './fake-telegram.ts';
import { writeTestConfig } from './steward.ts';
import { tempDir } from './temp.ts';

/*
 * Several `steward start` processes on one PostgreSQL database (issue 17, scale-out): the
 * scale-out and SIGTERM tests and bench/scale.bench.ts use it.
 */

const DEFAULT_SERVER = 'postgres://postgres@127.0.0.1:5432/test';

/** The PostgreSQL server a cluster runs on: TEST_DATABASE_URL, else the local server. */
const clusterServer = () => process.env.TEST_DATABASE_URL || DEFAULT_SERVER;

/**
 * The cluster's server when it answers (startCluster creates its database there), else null. The
 * environment is left as it is: later files in the same worker read it.
 */
export async function answeringPostgres(): Promise<string | null> {
  const candidate = clusterServer();
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: candidate, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.end();
    return candidate;
  } catch {
    await client.end().catch(() => undefined);
    return null;
  }
}

export const TELEGRAM_SECRET = 'cluster-webhook-secret-0123456789';

export type Instance = Awaited<ReturnType<typeof startServer>> & {
  index: number;
  env: Record<string, string>;
};

export type Cluster = {
  db: TestDatabase;
  instances: Instance[];
  /** The user skills dir every instance watches. */
  skillsDir: string;
  /** POST /api/chat on instance `index`. */
  chat(index: number, body: Record<string, unknown>): Promise<Response>;
  /** POST /webhooks/telegram on instance `index` with the secret. */
  telegram(index: number, update: object): Promise<Response>;
  /** Starts instance `index` again (after it stopped) on its data dir and database, on a new port. */
  restart(index: number): Promise<Instance>;
  stop(): Promise<void>;
};

/**
 * `count` instances of `steward start` on a fresh database of the server, sharing one
 * steward.yaml and one user skills dir, each with its own data dir and port. With `telegram`
 * (the fake's URL) the Telegram channel receives webhooks from the senders in `allow`.
 */
export async function startCluster(options: {
  count: number;
  fake: FakeLlm;
  telegram?: { url: string; allow: string[] };
  extraYaml?: string;
  env?: Record<string, string>;
}): Promise<Cluster> {
  const db = await createTestDatabase('postgres', { migrate: false, adminUrl: clusterServer() });
  const ports = await Promise.all(Array.from({ length: options.count }, () => freePort()));
  const channels = options.telegram
    ? `channels:
  public_url: "http://127.0.0.1:${ports[0]}"
  allow: [${options.telegram.allow.map((entry) => `"${entry}"`).join(', ')}]
  telegram: { bot_token: "${FAKE_BOT_TOKEN}", webhook_secret: "${TELEGRAM_SECRET}", api_root: "${options.telegram.url}" }
`
    : '';
  const { dir, env } = writeTestConfig(options.fake.url, `${channels}${options.extraYaml ?? ''}`);
  const skillsDir = path.join(dir, 'shared-skills');
  mkdirSync(skillsDir, { recursive: true, mode: 0o700 });
  const envOf = (index: number): Record<string, string> => ({
    ...env,
    STEWARD_DATA_DIR: tempDir(`steward-instance-${index}-`),
    STEWARD_SKILLS_DIR: skillsDir,
    DATABASE_URL: db.url!,
    PORT: String(ports[index]),
    STEWARD_LOG_FILE: 'false',
    DATABASE_MAX_CONNECTIONS: '16',
    ...options.env,
  });
  const envs = ports.map((_, index) => envOf(index));
  const launch = async (index: number): Promise<Instance> => ({
    ...(await startServer({ env: envs[index]! })),
    index,
    env: envs[index]!,
  });
  const instances: Instance[] = [];
  try {
    // The first applies the migrations; the others start together.
    instances.push(await launch(0));
    instances.push(...(await Promise.all(ports.slice(1).map((_, offset) => launch(offset + 1)))));
  } catch (error) {
    await Promise.all(instances.map((instance) => instance.stop('SIGKILL')));
    await db.drop().catch(() => undefined);
    throw error;
  }
  const post = (index: number, route: string, body: object, headers: Record<string, string> = {}) =>
    fetch(`${instances[index]!.url}${route}`, {
      method: 'POST',
      // A new connection each time: no keep-alive reuse racing the server's idle timeout.
      headers: { 'content-type': 'application/json', connection: 'close', ...headers },
      body: JSON.stringify(body),
    }).catch((error: Error) => {
      const instance = instances[index]!;
      throw new Error(
        `POST ${route} to instance ${index} (exit code ${instance.child.exitCode}) failed: ${error.message} ${String((error.cause as Error | undefined)?.message)} ${JSON.stringify(body)}`,
      );
    });
  return {
    db,
    instances,
    skillsDir,
    chat: (index, body) => post(index, '/api/chat', body),
    telegram: (index, update) =>
      post(index, '/webhooks/telegram', update, { 'x-telegram-bot-api-secret-token': TELEGRAM_SECRET }),
    restart: async (index) => {
      // A fresh port: the old one may have been taken by anything on the machine meanwhile.
      envs[index] = { ...envs[index]!, PORT: String(await freePort()) };
      instances[index] = await launch(index);
      return instances[index]!;
    },
    stop: async () => {
      await Promise.all(instances.map((instance) => instance.stop('SIGTERM')));
      if (process.env.CLUSTER_LOGS)
        for (const instance of instances)
          writeFileSync(
            path.join(process.env.CLUSTER_LOGS, `instance-${instance.index}.log`),
            instance.output(),
          );
      await db.drop().catch(() => undefined);
    },
  };
}
