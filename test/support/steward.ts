import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach } from 'vitest';
import type { TurnOutcome } from '../../src/agents/index.ts';
import { runOnRuntime } from '../../src/cli/run.ts';
import { loadConfig, type ResolvedConfig } from '../../src/config/index.ts';
import { silentLogger } from '../../src/logging/logger.ts';
import { createRuntime, type Runtime, type RuntimeOptions } from '../../src/runtime.ts';
import type { CliResult } from './cli.ts';
import type { Backend, TestDatabase } from './db.ts';
import { createTestDatabase } from './db.ts';
import type { FakeLlm } from './fake-llm.ts';
import { tempDir } from './temp.ts';
import { useStarted } from './use-started.ts';

/** One model per role, so a fake can tell the orchestrator, sub-agents and the sentinel apart. */
export const ROLE_MODELS = {
  orchestrator: 'test/orchestrator',
  sub_agent: 'test/agent',
  sentinel: 'test/sentinel',
  compaction: 'test/compaction',
  embeddings: 'test/embed',
} as const;

/**
 * A steward.yaml for tests: the fake as endpoint, one model per role, optional extra YAML.
 * Compaction and embeddings are off unless `memory` is set, so scripts that do not care
 * about memory never see their requests.
 */
export function writeTestConfig(
  fakeUrl: string,
  extraYaml = '',
  options: { memory?: boolean; llmYaml?: string } = {},
): { dir: string; env: Record<string, string> } {
  const dir = tempDir('steward-e2e-');
  const roles = Object.entries(ROLE_MODELS)
    .filter(([role]) => options.memory || (role !== 'compaction' && role !== 'embeddings'))
    .map(([role, model]) => `    ${role}: { model: "${model}" }`)
    .join('\n');
  writeFileSync(
    path.join(dir, 'steward.yaml'),
    `llm:\n  base_url: "${fakeUrl}"\n  api_key: "test-key-0123456789"\n  max_retries: 2\n  timeout_ms: 10000\n${options.llmYaml ?? ''}  roles:\n${roles}\n${extraYaml}`,
  );
  return {
    dir,
    env: {
      STEWARD_CONFIG: path.join(dir, 'steward.yaml'),
      STEWARD_DATA_DIR: path.join(dir, 'data'),
      LOG_LEVEL: 'warn',
    },
  };
}

/** Runs `command` from the CLI as `userId` (timezone UTC), confirmed, as an operator types it. */
export function runAsCli(runtime: Runtime, userId: string, command: string) {
  return runtime.executor.execute({
    command,
    caller: { kind: 'cli' },
    user: { id: userId, timezone: 'UTC' },
    channel: 'cli',
    confirmed: true,
  });
}

/**
 * A runtime on the data dir and configuration a `steward` process would get from `env` in `cwd`,
 * for running in this process what a test has already proven through a real process. Close it
 * before a process starts on the same data dir (the runtime holds the data dir's lock).
 * `mcpServers` names the MCP servers to start, as `steward run` names those its command needs
 * (default: all configured).
 */
export function cliRuntime(
  env: Record<string, string>,
  cwd: string,
  options: Pick<RuntimeOptions, 'mcpServers'> = {},
): Promise<Runtime> {
  return createRuntime(loadConfig({ env, cwd }), { logger: silentLogger(), ...options });
}

/**
 * `steward run COMMAND [--user USER]` on `runtime` in this process, through the code the command
 * runs in its own process: the content it prints to stdout and its exit code (0 ok, 1 error).
 */
export async function runInProcess(runtime: Runtime, command: string, user = 'local'): Promise<CliResult> {
  const result = await runOnRuntime(runtime, command, user);
  return { code: result.status === 'ok' ? 0 : 1, stdout: `${result.content}\n`, stderr: '' };
}

export type TestSteward = {
  runtime: Runtime;
  config: ResolvedConfig;
  db: TestDatabase;
  close(): Promise<void>;
};

export type TestStewardOptions = {
  extraYaml?: string;
  memory?: boolean;
  llmYaml?: string;
  /** Fakes at the boundary the runtime takes as options (the webhook limiter, listener and logger). */
  runtime?: Pick<RuntimeOptions, 'webhooks' | 'logFile'>;
};

/** A full runtime in this process, on a fresh test database, talking to `fake`. */
export async function startTestSteward(
  backend: Backend,
  fake: FakeLlm,
  options: TestStewardOptions = {},
): Promise<TestSteward> {
  const { dir, env } = writeTestConfig(fake.url, options.extraYaml, {
    memory: options.memory,
    llmYaml: options.llmYaml,
  });
  const config = loadConfig({ env, cwd: dir });
  const db = await createTestDatabase(backend);
  const runtime = await createRuntime(config, {
    database: db.database,
    logger: silentLogger(),
    metrics: true,
    ...options.runtime,
  });
  return {
    runtime,
    config,
    db,
    close: async () => {
      await runtime.close();
      await db.drop();
    },
  };
}

/**
 * The Steward of the enclosing `describe` block: started on `fake` (see useFakeLlm) before its
 * tests, closed after them, the fake's script cleared after each test.
 */
export function useTestSteward(
  backend: Backend,
  fake: FakeLlm,
  options: UseStewardOptions = {},
): TestSteward {
  return useScriptedSteward(fake, () => startTestSteward(backend, fake, options), {
    startMs: options.startTimeoutMs,
  });
}

export type UseStewardOptions = TestStewardOptions & { startTimeoutMs?: number };

/** What `start` makes, for the enclosing `describe` block as useTestSteward describes it. */
export function useScriptedSteward<T extends TestSteward>(
  fake: FakeLlm,
  start: () => Promise<T>,
  timeouts: { startMs?: number; stopMs?: number },
): T {
  afterEach(() => {
    fake.reset();
  });
  return useStarted('the test Steward', start, (steward) => steward.close(), timeouts);
}

/** Turns typed at the CLI: as `userId`, in `conversationId` or else in a new conversation. */
export function cliTurns(steward: TestSteward) {
  return (userId: string, text: string, conversationId?: string): Promise<TurnOutcome> =>
    steward.runtime.engine.handle({
      userId,
      text,
      channel: 'cli',
      ...(conversationId ? { conversationId } : { newConversation: true }),
    });
}
