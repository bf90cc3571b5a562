import type { ResolvedConfig } from '../config/index.ts';
import type { Runtime } from '../runtime.ts';
import { ensureUser, userIdProblem } from '../users/index.ts';
import { CliExit, EXIT_ERROR, EXIT_OK, EXIT_USAGE } from './common.ts';
import { remoteServer } from './remote.ts';

export type RunResult = { status: 'ok' | 'error'; content: string; metadata: Record<string, unknown> };

/**
 * `steward run "<command>"`: executes one command (or get_skill …) without any LLM and prints
 * the result. Exit 0 for ok, 1 for an error result, 2 for a usage error.
 */
export async function runCommand(
  config: ResolvedConfig,
  command: string,
  options: { user: string; json?: boolean },
): Promise<void> {
  const problem = userIdProblem(options.user);
  if (problem) throw new CliExit(EXIT_USAGE, `steward run: ${problem}`);
  if (!command.trim())
    throw new CliExit(EXIT_USAGE, 'steward run: give a command, e.g. steward run "get_skill"');
  const result = await execute(config, command, options.user);
  const text = options.json ? JSON.stringify(result, null, 2) : result.content;
  process.stdout.write(`${text}\n`);
  if (result.status !== 'ok') throw new CliExit(EXIT_ERROR);
  throw new CliExit(EXIT_OK);
}

async function execute(config: ResolvedConfig, command: string, userId: string): Promise<RunResult> {
  const remote = remoteServer(config);
  if (remote) {
    const response = await fetch(`${remote.url}/api/run`, {
      method: 'POST',
      headers: remote.headers,
      body: JSON.stringify({ command, user: userId }),
    });
    if (!response.ok) {
      const body = (await response.json().catch(() => ({}))) as { message?: string };
      throw new CliExit(
        EXIT_ERROR,
        `steward run: the server at ${remote.url} answered ${response.status}: ${body.message ?? ''}`,
      );
    }
    return (await response.json()) as RunResult;
  }
  // Only a local run needs the runtime: a relayed one (above) takes half the time without it.
  const [{ serversNeededBy }, { createRuntime }] = await Promise.all([
    import('../mcp/index.ts'),
    import('../runtime.ts'),
  ]);
  const mcpServers = serversNeededBy(
    command,
    config.mcp_servers.map((server) => server.name),
  );
  const runtime = await createRuntime(config, { mcpServers });
  try {
    return await runOnRuntime(runtime, command, userId);
  } finally {
    await runtime.close();
  }
}

/** What `steward run` does on an open runtime of its own: `command` as `userId` (made if new). */
export async function runOnRuntime(runtime: Runtime, command: string, userId: string): Promise<RunResult> {
  const user = await ensureUser(runtime.database, userId);
  const outcome = await runtime.executor.execute({
    command,
    caller: { kind: 'cli' },
    user: { id: user.id, timezone: user.timezone },
    channel: 'cli',
    // The user typed exactly this command: there is no agent for the sentinel to check, and
    // `steward run` must work with no LLM configured.
    confirmed: true,
  });
  return { status: outcome.status, content: outcome.content, metadata: outcome.metadata ?? {} };
}
