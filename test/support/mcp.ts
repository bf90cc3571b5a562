import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import type { McpServerConfig } from '../../src/config/index.ts';

export const MCP_FIXTURE = fileURLToPath(new URL('./mcp-fixture-server.ts', import.meta.url));

/** A stdio entry running the fixture server in `mode` (see mcp-fixture-server.ts). */
export function fixtureServer(
  name: string,
  mode = 'notes',
  extra: { args?: string[]; env?: Record<string, string> } = {},
): McpServerConfig {
  return {
    name,
    command: process.execPath,
    args: [MCP_FIXTURE, mode, ...(extra.args ?? [])],
    ...(extra.env ? { env: extra.env } : {}),
  };
}

/** `mcp_servers:` YAML for steward.yaml. */
export function mcpServersYaml(servers: McpServerConfig[]): string {
  return stringify({ mcp_servers: servers });
}
