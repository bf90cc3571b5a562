import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../src/logging/logger.ts';
import { mcpHttpRoutes } from '../src/mcp/index.ts';
import { createServerApp, listen } from '../src/server/index.ts';
import { createApiToken, ensureUser } from '../src/users/index.ts';
import {
  approve,
  callTool,
  dispatch,
  getResults,
  lastToolResult,
  messageText,
  refuse,
  reply,
  run,
  scriptModels,
} from './support/agent-scripts.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { fixtureServer, mcpServersYaml } from './support/mcp.ts';
import { startTestSteward, type TestSteward } from './support/steward.ts';

/*
 * MCP in a whole Steward: an MCP server's tools used by the orchestrator and a sub-agent in a
 * scripted turn (the prompt carries one domain line, never the schemas), and Steward's own
 * MCP server answering the SDK's client over Streamable HTTP, behind the API token.
 */

const TOKEN = 'mcp-test-token-0123456789';
const text = (result: unknown) =>
  ((result as { content: Array<{ type: string; text: string }> }).content[0]?.text ?? '') as string;

let fake: FakeLlm;
let steward: TestSteward;
beforeAll(async () => {
  fake = await startFakeLlm();
  steward = await startTestSteward('pglite', fake, {
    extraYaml: `${mcpServersYaml([fixtureServer('notes')])}api_token: ${TOKEN}\n`,
  });
});
afterAll(async () => {
  await steward?.close();
  await fake?.close();
});
afterEach(() => fake.reset());

describe('an MCP server in an orchestrator turn', () => {
  it('is discovered with get_skill, read directly and changed by a sub-agent after the sentinel', async () => {
    const command = 'notes.add_note --title "Buy milk" --tags home';
    const models = scriptModels(fake, {
      orchestrator: [
        callTool('get_skill', { path: 'notes' }),
        run('notes.list_notes'),
        dispatch({
          agent_id: 'writer',
          mission: 'Add the note "Buy milk" tagged home',
          skills: ['notes.add_note'],
        }),
        getResults(),
        reply('Added "Buy milk" to your notes.'),
      ],
      agents: { writer: [run(command), reply('Added note 1.')] },
      sentinel: [approve('The user asked for this note.')],
    });

    const outcome = await steward.runtime.engine.handle({
      userId: 'local',
      text: 'Note that I need to buy milk',
      channel: 'cli',
      newConversation: true,
    });

    models.assertDone();
    // An MCP tool's receipt names its main flag.
    expect(outcome).toMatchObject({
      status: 'completed',
      reply: 'Added "Buy milk" to your notes.\n\n✓ notes.add_note — Buy milk',
    });
    const [first, second, third] = models.orchestratorRequests();
    const system = messageText(first!.body.messages?.[0]?.content);
    expect(system).toContain('- notes: MCP server, 9 tools: add_note, always_fails, big, get_item');
    // One domain line, no schemas: flags appear only once the model asks for the page.
    expect(system).not.toContain('due-date');
    expect(first!.body.tools?.map((tool) => tool.function.name).sort()).toEqual([
      'dispatch_agent',
      'get_agent_results',
      'get_skill',
      'message_agent',
      'run',
    ]);
    expect(lastToolResult(second!)).toContain('- notes.add_note --title <text> [--due-date <text>]');
    expect(lastToolResult(third!)).toBe('<external source="mcp:notes">\nNo notes.\n</external>');
    const shown = messageText(models.sentinelRequests()[0]!.body.messages?.at(-1)?.content);
    expect(shown).toContain(`Proposed command: ${command}`);
    const rows = await steward.db.database.query<{ skill: string; status: string; result: string }>(
      "SELECT skill, status, result FROM skill_executions WHERE skill LIKE 'notes.%' ORDER BY started_at",
    );
    expect(rows.map((row) => [row.skill, row.status])).toEqual([
      ['notes.list_notes', 'ok'],
      ['notes.add_note', 'ok'],
    ]);
    expect(rows[1]!.result).toContain('"tags":["home"]');
  });
});

describe('/mcp over Streamable HTTP', () => {
  let url: string;
  let close: () => Promise<void>;
  let app: ReturnType<typeof createServerApp>;
  beforeAll(async () => {
    const { runtime } = steward;
    app = createServerApp({
      database: runtime.database,
      logger: silentLogger(),
      config: () => runtime.config.get(),
      mcp: mcpHttpRoutes({
        database: runtime.database,
        executor: runtime.executor,
        skills: () => runtime.skills.snapshot(),
        config: () => runtime.config.get(),
      }),
    });
    const server = await listen(app, { host: '127.0.0.1', port: 0, apiToken: TOKEN });
    url = `http://127.0.0.1:${server.port}/mcp`;
    close = server.close;
  });
  afterAll(async () => {
    await close?.();
  });

  const connect = async (user: string, token: string | null = TOKEN) => {
    const transport = new StreamableHTTPClientTransport(new URL(`${url}?user=${user}`), {
      requestInit: { headers: token ? { authorization: `Bearer ${token}` } : {} },
    });
    const client = new Client({ name: 'http-host', version: '1.0.0' });
    await client.connect(transport);
    return client;
  };

  it('refuses a client without the API token', async () => {
    await expect(connect('local', null)).rejects.toThrow(/401|unauthorized/i);
    await expect(connect('local', 'wrong-token-0123456789')).rejects.toThrow(/401|unauthorized/i);
  });

  it('answers the SDK client as the chosen user, with the sentinel on mutating commands', async () => {
    const models = scriptModels(fake, {
      sentinel: [approve('Creating a task is harmless.'), refuse('The user never asked to delete anything.')],
    });
    const carol = await connect('carol');
    const dave = await connect('dave');
    try {
      expect((await carol.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['get_skill', 'run']);
      const created = await carol.callTool({
        name: 'run',
        arguments: { command: 'tasks.create --title "Carol over HTTP"' },
      });
      expect(created.isError, text(created)).toBe(false);
      const id = /\[(t_[a-z0-9]+)\]/.exec(text(created))![1]!;
      const mine = await carol.callTool({
        name: 'run',
        arguments: { command: 'tasks.search --query carol' },
      });
      expect(text(mine)).toContain('Carol over HTTP');
      const theirs = await dave.callTool({
        name: 'run',
        arguments: { command: 'tasks.search --query carol' },
      });
      expect(text(theirs)).not.toContain('Carol over HTTP');

      const stopped = await carol.callTool({
        name: 'run',
        arguments: { command: `tasks.delete --id ${id}` },
      });
      expect(stopped.isError).toBe(true);
      expect(text(stopped)).toContain('the safety check stopped tasks.delete');
      expect(
        text(await carol.callTool({ name: 'run', arguments: { command: `tasks.get --id ${id}` } })),
      ).toContain('Carol over HTTP');
    } finally {
      await carol.close();
      await dave.close();
    }
    models.assertDone();
    expect(models.sentinelRequests()).toHaveLength(2);
  });

  it('lets a per-user token act only as its own user', async () => {
    await ensureUser(steward.runtime.database, 'erin');
    const { token } = await createApiToken(steward.runtime.database, 'erin', 'mcp test');
    const erin = await connect('erin', token);
    try {
      const mine = await erin.callTool({ name: 'run', arguments: { command: 'profile.get' } });
      expect(text(mine)).toContain('User erin');
    } finally {
      await erin.close();
    }
    await expect(connect('carol', token)).rejects.toThrow(/403|acts only as user erin/);
  });

  it('refuses a Host header that is not this server (DNS rebinding)', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    // In-process: fetch() does not let a caller set Host, a browser under DNS rebinding does.
    const response = await app.request('/mcp', {
      method: 'POST',
      body,
      headers: {
        host: 'evil.example',
        authorization: `Bearer ${TOKEN}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
    });
    expect(response.status).toBe(403);
  });
});
