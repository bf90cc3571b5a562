import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from '../config/index.ts';
import { errorMessage } from '../errors.ts';
import type { Logger } from '../logging/index.ts';
import type { ProvidedSkills, SkillHandler, SkillProvider } from '../skills/index.ts';
import { StdioProcessTransport } from './stdio-process-transport.ts';
import { actionNameFor } from './tool-names.ts';
import { type McpToolSkill, serverDomain, toolSkill, unavailableDomain } from './tool-skill.ts';

export const MCP_START_TIMEOUT_MS = 10_000;
/** A failed server is tried again on demand, at most this often. */
const RETRY_AFTER_MS = 30_000;
const MAX_TOOL_PAGES = 50;

export type McpServersOptions = {
  servers: readonly McpServerConfig[];
  /** The executor's handler map: tool handlers are added and removed here. */
  handlers: Map<string, SkillHandler>;
  /** Called after any server's skills or state changed (the registry re-merges). */
  onChange: () => void;
  logger: Logger;
  /** Per-call timeout: the skill timeout in force. */
  callTimeoutMs: () => number;
  startTimeoutMs?: number;
  /** Where PATH and HOME for stdio servers come from (default: this process). */
  env?: Record<string, string | undefined>;
  fetch?: typeof fetch;
  now?: () => number;
};

export type McpServerStatus = {
  name: string;
  status: 'idle' | 'starting' | 'ready' | 'unavailable';
  reason?: string;
  tools: number;
};

type Connection = {
  config: McpServerConfig;
  status: McpServerStatus['status'];
  reason?: string;
  client: Client | null;
  skills: McpToolSkill[];
  starting: Promise<void> | null;
  lastAttempt: number;
};

/**
 * The configured MCP servers as skill domains (DESIGN §1). Each server connects with a 10 s
 * deadline; one that fails, hangs or answers nonsense becomes an unavailable domain with the
 * reason, and everything else keeps working. Tools become skills through the registry.
 */
export class McpServers implements SkillProvider {
  readonly #options: McpServersOptions;
  readonly #connections = new Map<string, Connection>();
  readonly #now: () => number;
  #closed = false;

  constructor(options: McpServersOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    for (const config of options.servers) {
      this.#connections.set(config.name, {
        config,
        status: 'idle',
        client: null,
        skills: [],
        starting: null,
        lastAttempt: 0,
      });
    }
  }

  /** Connects the named servers (all by default) in parallel. Never rejects. */
  async start(names?: readonly string[]): Promise<void> {
    const wanted = [...this.#connections.values()].filter(
      (connection) => !names || names.includes(connection.config.name),
    );
    await Promise.all(wanted.map((connection) => this.#connect(connection)));
  }

  status(): McpServerStatus[] {
    return [...this.#connections.values()].map((connection) => ({
      name: connection.config.name,
      status: connection.status,
      ...(connection.reason ? { reason: connection.reason } : {}),
      tools: connection.skills.length,
    }));
  }

  provide(): ProvidedSkills {
    const skills: ProvidedSkills['skills'][number][] = [];
    const domains: ProvidedSkills['domains'][number][] = [];
    for (const connection of this.#connections.values()) {
      const { name } = connection.config;
      if (connection.status === 'idle' || connection.status === 'starting') {
        if (connection.skills.length === 0) continue;
      }
      if (connection.status === 'unavailable')
        domains.push(unavailableDomain(name, connection.reason ?? 'unknown'));
      else domains.push(serverDomain(name, connection.skills));
      skills.push(...connection.skills.map((skill) => skill.definition));
    }
    return { skills, domains };
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(
      [...this.#connections.values()].map(async (connection) => {
        await connection.starting?.catch(() => undefined);
        this.#dropHandlers(connection);
        const client = connection.client;
        connection.client = null;
        await client?.close().catch(() => undefined);
      }),
    );
  }

  #connect(connection: Connection): Promise<void> {
    if (connection.starting) return connection.starting;
    if (connection.status === 'ready' || this.#closed) return Promise.resolve();
    connection.status = 'starting';
    connection.lastAttempt = this.#now();
    connection.starting = this.#open(connection).finally(() => {
      connection.starting = null;
      this.#options.onChange();
    });
    return connection.starting;
  }

  async #open(connection: Connection): Promise<void> {
    const { config } = connection;
    const timeoutMs = this.#options.startTimeoutMs ?? MCP_START_TIMEOUT_MS;
    // The SDK (about 30 MB and 0.4 s to load) is loaded only once a server is configured.
    const [{ Client: McpClient }, { ToolListChangedNotificationSchema }] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/types.js'),
    ]);
    const transport = await this.#transport(config);
    const client = new McpClient({ name: 'steward', version: '0.1.0' });
    const deadline = AbortSignal.timeout(timeoutMs);
    try {
      await client.connect(transport, { timeout: timeoutMs, signal: deadline });
      const tools = await this.#listTools(client, timeoutMs, deadline);
      if (this.#closed) throw new Error('Steward is shutting down');
      this.#install(connection, tools, client);
      client.onclose = () => this.#lost(connection, client, transport);
      client.setNotificationHandler(
        ToolListChangedNotificationSchema,
        () => void this.#rediscover(connection),
      );
      this.#options.logger.info({ server: config.name, tools: tools.length }, 'MCP server connected');
    } catch (error) {
      // Read how the process ended before closing it ourselves.
      const detail = transport instanceof StdioProcessTransport ? transport.diagnosis() : '';
      await client.close().catch(() => undefined);
      const reason = deadline.aborted
        ? `did not answer within ${Math.round(timeoutMs / 1000)} s${detail ? ` (${detail})` : ''}`
        : describeFailure(error, detail);
      connection.status = 'unavailable';
      connection.reason = reason;
      this.#options.logger.warn({ server: config.name, reason }, 'MCP server unavailable');
    }
  }

  async #transport(config: McpServerConfig): Promise<Transport> {
    if (config.url) {
      const { StreamableHTTPClientTransport } = await import(
        '@modelcontextprotocol/sdk/client/streamableHttp.js'
      );
      return new StreamableHTTPClientTransport(new URL(config.url), {
        requestInit: { headers: config.headers ?? {} },
        ...(this.#options.fetch ? { fetch: this.#options.fetch } : {}),
      });
    }
    const own = this.#options.env ?? process.env;
    const inherited: Record<string, string> = {};
    for (const name of ['PATH', 'HOME']) if (own[name] !== undefined) inherited[name] = own[name]!;
    return new StdioProcessTransport({
      command: config.command!,
      args: config.args ?? [],
      env: { ...inherited, ...config.env },
    });
  }

  async #listTools(client: Client, timeoutMs: number, signal: AbortSignal): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const result = await client.listTools(cursor ? { cursor } : undefined, { timeout: timeoutMs, signal });
      tools.push(...result.tools);
      cursor = result.nextCursor;
      if (!cursor) break;
    }
    return tools;
  }

  #install(connection: Connection, tools: readonly Tool[], client: Client): void {
    const name = connection.config.name;
    const taken = new Set<string>();
    const skills = [...tools]
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((tool) => {
        const action = actionNameFor(tool.name, taken);
        taken.add(action);
        return toolSkill(name, tool, action, (toolName, args, signal) =>
          this.#call(connection, toolName, args, signal),
        );
      });
    this.#dropHandlers(connection);
    connection.skills = skills;
    for (const skill of skills) this.#options.handlers.set(skill.handler.name, skill.handler);
    connection.client = client;
    connection.status = 'ready';
    connection.reason = undefined;
  }

  async #rediscover(connection: Connection): Promise<void> {
    const client = connection.client;
    if (!client) return;
    try {
      const timeoutMs = this.#options.startTimeoutMs ?? MCP_START_TIMEOUT_MS;
      const tools = await this.#listTools(client, timeoutMs, AbortSignal.timeout(timeoutMs));
      this.#install(connection, tools, client);
      this.#options.onChange();
    } catch (error) {
      this.#options.logger.warn(
        { server: connection.config.name, err: error },
        'MCP tool list refresh failed',
      );
    }
  }

  #lost(connection: Connection, client: Client, transport: Transport): void {
    if (connection.client !== client || this.#closed) return;
    const detail = transport instanceof StdioProcessTransport ? transport.diagnosis() : '';
    connection.client = null;
    connection.status = 'unavailable';
    connection.reason = `the connection closed${detail ? ` (${detail})` : ''}`;
    this.#options.logger.warn(
      { server: connection.config.name, reason: connection.reason },
      'MCP server lost',
    );
    this.#options.onChange();
  }

  async #call(
    connection: Connection,
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<CallToolResult | { unavailable: string }> {
    if (connection.status !== 'ready' && this.#now() - connection.lastAttempt >= RETRY_AFTER_MS)
      await this.#connect(connection);
    else if (connection.starting) await connection.starting;
    const client = connection.client;
    if (connection.status !== 'ready' || !client)
      return { unavailable: connection.reason ?? 'not connected' };
    // The executor's own timeout aborts `signal` first; the SDK's is a backstop.
    const timeout = this.#options.callTimeoutMs() + 1_000;
    return (await client.callTool({ name: tool, arguments: args }, undefined, {
      signal,
      timeout,
    })) as CallToolResult;
  }

  #dropHandlers(connection: Connection): void {
    for (const skill of connection.skills) {
      if (this.#options.handlers.get(skill.handler.name) === skill.handler)
        this.#options.handlers.delete(skill.handler.name);
    }
  }
}

/** One line saying why a server could not be used: its own words, an invalid answer, or how it exited. */
function describeFailure(error: unknown, detail: string): string {
  const issues = (error as { issues?: Array<{ path: PropertyKey[]; message: string }> }).issues;
  const message = Array.isArray(issues)
    ? `invalid answer from the server: ${issues
        .slice(0, 3)
        .map((issue) => `${issue.path.map(String).join('.')}: ${issue.message}`)
        .join('; ')}`
    : errorMessage(error).replace(/^MCP error -?\d+: /, '');
  const status = (error as { code?: unknown }).code;
  // The Streamable HTTP transport's errors carry the HTTP status as a number.
  if (typeof status === 'number' && status >= 400 && status < 600)
    return describeFailure(new Error(`HTTP ${status}: ${message}`), detail);
  const text = detail && !detail.includes(message) ? `${message} (${detail})` : detail || message;
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 300 ? `${line.slice(0, 299)}…` : line;
}
