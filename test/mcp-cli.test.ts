import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../src/runtime.ts';
import { approve, messageText, scriptModels } from './support/agent-scripts.ts';
import { freePort, MAIN, NODE_FLAGS, runCli, startServer } from './support/cli.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { fixtureServer, mcpServersYaml } from './support/mcp.ts';
import { cliRuntime, runInProcess, writeTestConfig } from './support/steward.ts';

/*
 * The CLI end to end: `steward run` starting configured MCP servers itself, and `steward mcp`
 * answering the SDK's own client over stdio (alone, and relaying to a running `steward start`).
 */

const text = (result: unknown) =>
  ((result as { content: Array<{ type: string; text: string }> }).content[0]?.text ?? '') as string;

function home(yaml: string) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'steward-mcp-cli-'));
  writeFileSync(path.join(dir, 'steward.yaml'), yaml);
  return { dir, env: { STEWARD_DATA_DIR: path.join(dir, 'data'), LOG_LEVEL: 'warn' } };
}

async function mcpClient(args: string[], env: Record<string, string>, cwd: string): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    // As an MCP host runs the `steward` command: with the flags of its launcher.
    args: [...NODE_FLAGS, MAIN, 'mcp', ...args],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    cwd,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'test-host', version: '1.0.0' });
  await client.connect(transport, { timeout: 60_000 });
  return client;
}

describe('steward run with MCP servers', () => {
  const steward = home(
    mcpServersYaml([
      fixtureServer('notes', 'notes', { env: { NOTES_DIR: '/tmp/notes' } }),
      fixtureServer('broken', 'crash'),
    ]),
  );
  const run = (command: string, env: Record<string, string> = {}) =>
    runCli(['run', command], { env: { ...steward.env, ...env }, cwd: steward.dir });

  it("starts the servers itself, never handing them Steward's own secrets: discovery, a call, an unavailable server", async () => {
    const shown = await run('notes.show_env', {
      STEWARD_API_TOKEN: 'owner-token-0123456789',
      STEWARD_SECRET_KEY: 'secret-key-0123456789',
    });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('\nHOME,NOTES_DIR,PATH\n');

    // Discovery and the other calls in this process, as `steward run` executes them, on a runtime
    // that starts the same servers (the process above proves that path and its exit code).
    const runtime = await cliRuntime(steward.env, steward.dir);
    try {
      const list = await runInProcess(runtime, 'get_skill');
      expect(list.code, list.stdout).toBe(0);
      expect(list.stdout).toContain('notes — MCP server, 9 tools');
      expect(list.stdout).toContain('broken — unavailable: Connection closed');

      const added = await runInProcess(
        runtime,
        'notes.add_note --title "Buy milk" --due-date 2026-05-01 --pinned',
      );
      expect(added.code, added.stdout).toBe(0);
      expect(added.stdout).toContain('<external source="mcp:notes">');
      expect(added.stdout).toContain('"dueDate":"2026-05-01"');

      const call = await runInProcess(runtime, 'broken.add_note --title x');
      expect(call.code).toBe(1);
      expect(call.stdout).toContain('broken.add_note: unavailable: Connection closed');
    } finally {
      await runtime.close();
    }
  }, 120_000);

  it('refuses a server named like a built-in domain as a configuration error', async () => {
    const clash = home(mcpServersYaml([fixtureServer('tasks')]));
    const result = await runCli(['run', 'get_skill'], { env: clash.env, cwd: clash.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('mcp_servers.0.name');
    expect(result.stderr).toContain('"tasks" is a built-in skill domain');
  }, 60_000);
});

describe('steward mcp over stdio', () => {
  it('offers exactly get_skill and run, as the chosen user, and refuses mutating commands without an LLM', async () => {
    const steward = home(mcpServersYaml([fixtureServer('notes')]));
    // Seeding and the checks after run in this process, as `steward run` executes them (no MCP
    // server needed, as `steward run` starts none for a tasks command).
    const here = async (use: (runtime: Runtime) => Promise<void>) => {
      const runtime = await cliRuntime(steward.env, steward.dir, { mcpServers: [] });
      try {
        await use(runtime);
      } finally {
        await runtime.close();
      }
    };
    await here(async (runtime) => {
      const seeded = await runInProcess(runtime, 'tasks.create --title "Bob only"', 'bob');
      expect(seeded.code, seeded.stdout).toBe(0);
    });

    const client = await mcpClient(['--user', 'bob'], steward.env, steward.dir);
    try {
      const tools = (await client.listTools()).tools;
      expect(tools.map((tool) => tool.name).sort()).toEqual(['get_skill', 'run']);
      const getSkill = tools.find((tool) => tool.name === 'get_skill')!;
      expect(Object.keys(getSkill.inputSchema.properties ?? {}).sort()).toEqual(['path', 'search']);
      expect(client.getInstructions()).toContain('- notes: MCP server');

      const page = await client.callTool({ name: 'get_skill', arguments: { path: 'notes' } });
      expect(text(page)).toContain('- notes.add_note --title <text>');
      const found = await client.callTool({
        name: 'run',
        arguments: { command: 'tasks.search --query bob' },
      });
      expect(text(found)).toContain('Bob only');
      const notes = await client.callTool({ name: 'run', arguments: { command: 'notes.list_notes' } });
      expect(notes.isError).toBe(false);

      const refused = await client.callTool({
        name: 'run',
        arguments: { command: 'tasks.create --title "From the host"' },
      });
      expect(refused.isError).toBe(true);
      expect(text(refused)).toContain("a command from an MCP host is another model's proposal");
      expect(text(refused)).toContain('none is configured');
    } finally {
      await client.close();
    }
    // The refused task was never created; the other user sees nothing of bob's.
    await here(async (runtime) => {
      const local = await runInProcess(runtime, 'tasks.search --query only');
      expect(local.stdout).not.toContain('Bob only');
      const bob = await runInProcess(runtime, 'tasks.search --query host', 'bob');
      expect(bob.stdout).not.toContain('From the host');
    });
  }, 180_000);

  describe('with an LLM configured', () => {
    let fake: FakeLlm;
    beforeAll(async () => {
      fake = await startFakeLlm();
    });
    afterAll(async () => {
      await fake?.close();
    });

    it('sends a mutating command through the sentinel, which learns it came from the MCP host', async () => {
      const { dir, env } = writeTestConfig(fake.url);
      const models = scriptModels(fake, { sentinel: [approve('Plain task creation.')] });
      const client = await mcpClient([], env, dir);
      try {
        const created = await client.callTool({
          name: 'run',
          arguments: { command: 'tasks.create --title "Via MCP"' },
        });
        expect(created.isError, text(created)).toBe(false);
        expect(text(created)).toContain('Via MCP');
      } finally {
        await client.close();
      }
      models.assertDone();
      const shown = messageText(models.sentinelRequests()[0]!.body.messages?.at(-1)?.content);
      expect(shown).toContain('proposed by test-host, another model acting for the user over MCP');
      expect(shown).toContain('Proposed command: tasks.create --title "Via MCP"');
    }, 120_000);
  });

  it('relays to a running steward start that owns the data dir', async () => {
    const steward = home('');
    const port = await freePort();
    const server = await startServer({ env: { ...steward.env, PORT: String(port) }, cwd: steward.dir });
    try {
      const client = await mcpClient([], steward.env, steward.dir);
      try {
        expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual([
          'get_skill',
          'run',
        ]);
        const domains = await client.callTool({ name: 'get_skill', arguments: {} });
        expect(text(domains)).toContain('tasks — ');
      } finally {
        await client.close();
      }
    } finally {
      await server.stop();
    }
  }, 120_000);
});
