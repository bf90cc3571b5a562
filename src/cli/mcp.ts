import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { ResolvedConfig } from '../config/index.ts';
import { createLogger } from '../logging/index.ts';
import { bridgeToHttp, createStewardMcpServer } from '../mcp/index.ts';
import { createRuntime } from '../runtime.ts';
import { ensureUser, userIdProblem } from '../users/index.ts';
import { CliExit, EXIT_OK, EXIT_USAGE } from './common.ts';
import { remoteServer } from './remote.ts';

/**
 * `steward mcp`: Steward as an MCP server on stdio, acting as one user (the owner `local`
 * unless `--user`). Stdout carries only the protocol; logs go to stderr. When `steward start`
 * owns the embedded data dir, messages are relayed to its `/mcp` instead.
 */
export async function mcpCommand(config: ResolvedConfig, options: { user: string }): Promise<void> {
  const problem = userIdProblem(options.user);
  if (problem) throw new CliExit(EXIT_USAGE, `steward mcp: ${problem}`);
  const transport = new StdioServerTransport();
  const remote = remoteServer(config);
  if (remote) {
    const url = new URL(`${remote.url}/mcp`);
    url.searchParams.set('user', options.user);
    const { 'content-type': _contentType, ...headers } = remote.headers;
    await bridgeToHttp(transport, url, headers);
    throw new CliExit(EXIT_OK);
  }

  const logger = createLogger({ level: config.log_level, secrets: () => config.secrets });
  const runtime = await createRuntime(config, { watch: true, logger });
  const user = await ensureUser(runtime.database, options.user);
  const server = await createStewardMcpServer(
    {
      executor: runtime.executor,
      skills: () => runtime.skills.snapshot(),
      config: () => runtime.config.get(),
    },
    { id: user.id, timezone: user.timezone },
  );
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  await server.connect(transport);
  logger.info({ user: user.id }, 'Steward MCP server on stdio');
  await closed;
  await server.close().catch(() => undefined);
  await runtime.close();
  throw new CliExit(EXIT_OK);
}
