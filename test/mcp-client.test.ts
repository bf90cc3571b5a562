import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpServerConfig } from '../src/config/index.ts';
import { silentLogger } from '../src/logging/logger.ts';
import { McpServers } from '../src/mcp/index.ts';
import { BUILTIN_SKILLS_DIR } from '../src/runtime.ts';
import type { Caller } from '../src/skills/executor/index.ts';
import { builtinHandlers } from '../src/skills/handlers/index.ts';
import { fencedSources, type Sentinel, SkillExecutor, SkillRegistry } from '../src/skills/index.ts';
import { createTestDatabase, type TestDatabase } from './support/db.ts';
import { fixtureServer } from './support/mcp.ts';
import { startHttpMcpFixture } from './support/mcp-http-fixture.ts';

/*
 * MCP servers as skill domains, through the real registry and executor pipeline: discovery
 * with get_skill, flags generated from input schemas, the sentinel for tools not annotated
 * read-only, fenced results, timeouts, and servers that crash, hang or answer nonsense.
 */

type Harness = {
  run(command: string, caller?: Caller, confirmed?: boolean): ReturnType<SkillExecutor['execute']>;
  reviewed: string[];
  servers: McpServers;
  close(): Promise<void>;
};

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('pglite');
});
afterAll(async () => {
  await db?.drop();
});

async function harness(
  servers: McpServerConfig[],
  options: { skillTimeoutMs?: number; startTimeoutMs?: number; env?: Record<string, string> } = {},
): Promise<Harness> {
  const registry = new SkillRegistry({ roots: [{ dir: BUILTIN_SKILLS_DIR, source: 'builtin' }] });
  registry.load();
  const handlers = builtinHandlers();
  const mcp = new McpServers({
    servers,
    handlers,
    onChange: () => registry.refresh(),
    logger: silentLogger(),
    callTimeoutMs: () => options.skillTimeoutMs ?? 5_000,
    startTimeoutMs: options.startTimeoutMs,
    env: options.env,
  });
  registry.addProvider(mcp);
  await mcp.start();
  const reviewed: string[] = [];
  const sentinel: Sentinel = {
    review: async (request) => {
      reviewed.push(request.command);
      return { approved: true, reasoning: 'fine' };
    },
  };
  const executor = new SkillExecutor({
    database: db.database,
    skills: () => registry.snapshot(),
    handlers,
    services: { database: db.database },
    logger: silentLogger(),
    sentinel,
    defaultTimeoutMs: options.skillTimeoutMs ?? 5_000,
  });
  return {
    run: (command, caller = { kind: 'cli' }, confirmed = false) =>
      executor.execute({ command, caller, user: { id: 'local', timezone: 'UTC' }, confirmed }),
    reviewed,
    servers: mcp,
    close: () => mcp.close(),
  };
}

describe('an MCP server as a skill domain', () => {
  let steward: Harness;
  beforeAll(async () => {
    steward = await harness([fixtureServer('notes', 'notes', { env: { NOTES_DIR: '/tmp/notes' } })], {
      skillTimeoutMs: 1_500,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: '/home/steward',
        STEWARD_API_TOKEN: 'owner-token-0123456789',
        OPENROUTER_API_KEY: 'sk-or-secret-0123456789',
      },
    });
  });
  afterAll(async () => {
    await steward?.close();
  });

  it('appears as one domain line, its page listing each tool by full name with one usage line', async () => {
    const list = await steward.run('get_skill');
    expect(list.content).toContain('notes — MCP server, 9 tools: add_note, always_fails, big, get_item');
    const page = await steward.run('get_skill: notes');
    expect(page.status).toBe('ok');
    const lines = page.content.split('\n').filter((line) => line.startsWith('- notes.'));
    expect(lines).toHaveLength(9);
    expect(lines).toContain(
      '- notes.add_note --title <text> [--due-date <text>] [--tags <text>]... [--pinned] [--priority <integer>] [--meta <json>] — Add a note.',
    );
    // An invalid tool name is mapped to a valid action, and the page shows the original.
    expect(lines).toContain('- notes.get_item --id <integer> — Get one note by id. (MCP tool "Get-Item")');
    const help = await steward.run('notes.add_note --help');
    expect(help.content).toContain('notes.add_note (mutating, asks for confirmation)');
    expect(help.content).toContain('- `--due-date` (string) — When it is due (YYYY-MM-DD)');
    expect((await steward.run('get_skill: notes.list_notes')).content).toContain('(read-only)');
  });

  it('turns flags into the tool arguments: kebab-case names, switches, repeated lists, JSON objects', async () => {
    const outcome = await steward.run(
      `notes.add_note --title "Buy milk" --due-date 2026-05-01 --tags home --tags urgent --pinned --priority 2 --meta '{"source": "test"}'`,
    );
    expect(outcome.status).toBe('ok');
    const echoed = JSON.parse(/Added note \d+: (.*)\n/.exec(outcome.content)![1]!);
    expect(echoed).toMatchObject({
      title: 'Buy milk',
      dueDate: '2026-05-01',
      tags: ['home', 'urgent'],
      pinned: true,
      priority: 2,
      meta: { source: 'test' },
    });
    expect(fencedSources(outcome.content)).toEqual(['mcp:notes']);
    const found = await steward.run('notes.get_item --id 1');
    expect(found.content).toContain('"title":"Buy milk"');
  });

  it('reports bad flags the way every skill does, without calling the server', async () => {
    expect((await steward.run('notes.add_note --due-date 2026-05-01')).content).toContain(
      'Missing required flag --title',
    );
    const unknown = await steward.run('notes.add_note --title x --colour red');
    expect(unknown.content).toContain('Unknown flag --colour for notes.add_note. Accepted flags:');
    expect(unknown.content).toContain('--due-date');
    expect((await steward.run('notes.get_item --id first')).content).toContain('Invalid --id');
    expect((await steward.run('notes.add_note --title x --meta notjson')).content).toContain(
      'needs a JSON object',
    );
  });

  it('sends tools without readOnlyHint through the sentinel and the scope rules; read-only ones run directly', async () => {
    steward.reviewed.length = 0;
    await steward.run('notes.add_note --title "Call Ann"');
    await steward.run('notes.list_notes');
    expect(steward.reviewed).toEqual(['notes.add_note --title "Call Ann"']);
    const orchestrator: Caller = { kind: 'orchestrator', allowMutating: false };
    expect((await steward.run('notes.list_notes', orchestrator)).status).toBe('ok');
    const refused = await steward.run('notes.add_note --title x', orchestrator);
    expect(refused).toMatchObject({ status: 'error', metadata: { refused: 'scope' } });
  });

  it('fences results as data the server cannot close, and passes its errors on as error results', async () => {
    const hostile = await steward.run('notes.hostile');
    expect(fencedSources(hostile.content)).toEqual(['mcp:notes']);
    expect(hostile.content.match(/<\/external>/g)).toHaveLength(1);
    expect(hostile.content.endsWith('</external>')).toBe(true);
    const big = await steward.run('notes.big');
    expect(big.content).toContain('[14000 more characters from the server not shown]');
    expect(big.content.endsWith('</external>')).toBe(true);
    const failed = await steward.run('notes.always_fails');
    expect(failed.status).toBe('error');
    expect(failed.content).toContain('the fixture always fails');
    expect(fencedSources(failed.content)).toEqual(['mcp:notes']);
  });

  it('gives the server process only its entry env plus PATH and HOME', async () => {
    const outcome = await steward.run('notes.show_env');
    expect(outcome.content).toContain('\nHOME,NOTES_DIR,PATH\n');
    expect(outcome.content).not.toContain('STEWARD');
  });

  it('stops a call at the skill timeout, and the server keeps answering', async () => {
    const slow = await steward.run('notes.sleep --ms 5000');
    expect(slow).toMatchObject({ status: 'error', metadata: { timeout: true } });
    expect(slow.content).toContain('timed out after 1500 ms');
    expect((await steward.run('notes.list_notes')).status).toBe('ok');
  });
});

describe('MCP servers that fail', () => {
  let steward: Harness;
  beforeAll(async () => {
    steward = await harness(
      [
        fixtureServer('notes'),
        fixtureServer('broken', 'crash'),
        fixtureServer('stuck', 'hang'),
        fixtureServer('garbled', 'bad-tools'),
        { name: 'missing', command: '/nonexistent/mcp-server' },
      ],
      { startTimeoutMs: 5_000 },
    );
  });
  afterAll(async () => {
    await steward?.close();
  });

  it('marks each unavailable with its reason while everything else keeps working', async () => {
    const list = (await steward.run('get_skill')).content;
    expect(list).toContain(
      'broken — unavailable: Connection closed (the process exited with code 3; stderr: fixture: missing NOTES_TOKEN, refusing to start)',
    );
    expect(list).toContain('stuck — unavailable: did not answer within 5 s');
    expect(list).toMatch(/garbled — unavailable: invalid answer from the server: tools\.0\.name/);
    expect(list).toContain('missing — unavailable: could not start /nonexistent/mcp-server');
    expect(list).toContain('notes — MCP server');

    const page = await steward.run('get_skill: broken');
    expect(page.status).toBe('ok');
    expect(page.content.startsWith('unavailable: Connection closed')).toBe(true);
    const call = await steward.run('broken.add_note --title x');
    expect(call.status).toBe('error');
    expect(call.content).toContain('broken.add_note: unavailable: Connection closed');

    expect((await steward.run('notes.list_notes')).status).toBe('ok');
    expect((await steward.run('tasks.search --query anything')).status).toBe('ok');
  });

  it('keeps the skills of a server that died after connecting, as error results naming why', async () => {
    await steward.run('notes.quit', { kind: 'cli' }, true);
    await expect
      .poll(() => steward.servers.status().find((server) => server.name === 'notes')?.status)
      .toBe('unavailable');
    const page = await steward.run('get_skill: notes');
    expect(page.content).toMatch(/^unavailable: the connection closed \(the process exited with code 7/);
    const call = await steward.run('notes.list_notes');
    expect(call.status).toBe('error');
    expect(call.content).toContain('notes.list_notes: unavailable: the connection closed');
  });
});

describe('a Streamable HTTP MCP server', () => {
  it('is reached at its url with its headers, and its tools work like any skill', async () => {
    const fixture = await startHttpMcpFixture('wiki-token-0123456789');
    const steward = await harness([
      { name: 'wiki', url: fixture.url, headers: { Authorization: 'Bearer wiki-token-0123456789' } },
      { name: 'locked', url: fixture.url },
    ]);
    try {
      const page = await steward.run('get_skill: wiki');
      expect(page.content).toContain(
        '- wiki.search_pages --query <text> [--max-results <integer>] — Search wiki pages by words.',
      );
      const found = await steward.run('wiki.search_pages --query holidays --max-results 2');
      expect(found).toMatchObject({ status: 'ok' });
      expect(found.content).toBe(
        '<external source="mcp:wiki">\nPages about holidays (max 2): Onboarding, Holidays\n</external>',
      );
      expect(fixture.authorizations).toContain('Bearer wiki-token-0123456789');
      const locked = await steward.run('get_skill: locked');
      expect(locked.content).toMatch(/^unavailable: .*401/);
    } finally {
      await steward.close();
      await fixture.close();
    }
  });
});
