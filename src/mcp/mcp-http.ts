import { Hono } from 'hono';
import type { Database } from '../db/index.ts';
import { type AuthEnv, actingUser } from '../server/index.ts';
import { ensureUser, userIdProblem } from '../users/index.ts';
import { createStewardMcpServer, type StewardMcpDeps } from './steward-mcp-server.ts';

export type McpHttpDeps = StewardMcpDeps & { database: Database };

/**
 * `/mcp`: Steward's MCP server over Streamable HTTP, stateless (a fresh server per request, so
 * any instance behind a load balancer can answer) with JSON responses. Mounted behind the API
 * tokens and the Host/Origin guard. It acts as `?user=ID` for the owner's token (default
 * `local`), and only as the token's own user for a per-user token.
 */
export function mcpHttpRoutes(deps: McpHttpDeps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  app.all('/', async (c) => {
    const acting = actingUser(c, c.req.query('user'));
    if ('response' in acting) return acting.response;
    const problem = userIdProblem(acting.userId);
    if (problem) return c.json({ error: 'bad_request', message: problem }, 400);
    const user = await ensureUser(deps.database, acting.userId);
    const { WebStandardStreamableHTTPServerTransport } = await import(
      '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
    );
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    const server = await createStewardMcpServer(deps, { id: user.id, timezone: user.timezone });
    await server.connect(transport);
    try {
      return await transport.handleRequest(c.req.raw);
    } finally {
      await server.close();
    }
  });
  return app;
}
