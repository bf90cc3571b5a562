import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { errorMessage } from '../errors.ts';

/**
 * Relays MCP messages between a host's transport (stdio) and a running Steward's `/mcp`, for
 * `steward mcp` while `steward start` owns the embedded data dir. A request the server cannot
 * be reached for is answered with a JSON-RPC error, so the host never waits forever.
 * Resolves when either side closes.
 */
export async function bridgeToHttp(
  host: Transport,
  url: URL,
  headers: Record<string, string>,
): Promise<void> {
  const { StreamableHTTPClientTransport } = await import(
    '@modelcontextprotocol/sdk/client/streamableHttp.js'
  );
  const remote = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
  const done = new Promise<void>((resolve) => {
    host.onclose = () => resolve();
    remote.onclose = () => resolve();
  });
  remote.onmessage = (message) => void host.send(message).catch(() => undefined);
  remote.onerror = () => undefined;
  host.onmessage = (message) => {
    remote.send(message).catch((error) => {
      if (!('id' in message) || !('method' in message)) return;
      void host
        .send({
          jsonrpc: '2.0',
          id: message.id,
          error: { code: -32603, message: `Steward at ${url.origin} did not answer: ${errorMessage(error)}` },
        })
        .catch(() => undefined);
    });
  };
  await remote.start();
  await host.start();
  await done;
  await Promise.allSettled([remote.close(), host.close()]);
}
