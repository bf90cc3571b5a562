export { type McpHttpDeps, mcpHttpRoutes } from './mcp-http.ts';
export {
  MCP_START_TIMEOUT_MS,
  type McpServerStatus,
  McpServers,
  type McpServersOptions,
} from './mcp-servers.ts';
export { serversNeededBy } from './servers-needed.ts';
export { bridgeToHttp } from './stdio-bridge.ts';
export { createStewardMcpServer, type McpUser, type StewardMcpDeps } from './steward-mcp-server.ts';
export { actionNameFor, flagNameFor } from './tool-names.ts';
