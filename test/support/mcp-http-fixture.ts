import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/**
 * A Streamable HTTP MCP server on 127.0.0.1 (stateless, JSON responses) with one read-only
 * tool, `search_pages`, that answers only `Authorization: Bearer <token>`. Records the
 * Authorization header of every request.
 */
export async function startHttpMcpFixture(
  token: string,
): Promise<{ url: string; authorizations: string[]; close(): Promise<void> }> {
  const authorizations: string[] = [];
  const server = createServer(async (request, response) => {
    authorizations.push(request.headers.authorization ?? '');
    if (request.headers.authorization !== `Bearer ${token}`) {
      response.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
      return;
    }
    const mcp = new McpServer({ name: 'wiki', version: '1.0.0' });
    mcp.registerTool(
      'search_pages',
      {
        description: 'Search wiki pages by words.',
        inputSchema: { query: z.string(), maxResults: z.number().int().optional() },
        annotations: { readOnlyHint: true },
      },
      async ({ query, maxResults }) => ({
        content: [
          { type: 'text', text: `Pages about ${query} (max ${maxResults ?? 'all'}): Onboarding, Holidays` },
        ],
      }),
    );
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    response.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    authorizations,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
