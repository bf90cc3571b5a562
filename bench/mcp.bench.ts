import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { prefixTokens } from '../src/agents/context-builder.ts';
import { directTools } from '../src/agents/direct-tools.ts';
import { orchestratorTools } from '../src/agents/orchestrator-tools.ts';
import { orchestratorSystemPrompt } from '../src/agents/prompts.ts';
import type { ToolDefinition } from '../src/llm/index.ts';
import { countTokens } from '../src/llm/index.ts';
import { silentLogger } from '../src/logging/logger.ts';
import { McpServers } from '../src/mcp/index.ts';
import { BUILTIN_SKILLS_DIR } from '../src/runtime.ts';
import { builtinHandlers } from '../src/skills/handlers/index.ts';
import { getSkill, SkillRegistry } from '../src/skills/index.ts';
import { fixtureServer } from '../test/support/mcp.ts';
import { generatedTools } from '../test/support/mcp-generated-tools.ts';
import { type Bench, type BenchSection, ms, percentile } from './lib.ts';

const SERVERS = 5;
const TOOLS_PER_SERVER = 20;
const STARTS = 3;

/**
 * The prefix the orchestrator sends with every request when 5 MCP servers of 20 tools each are
 * configured: Steward's progressive surface (one domain line per server) against the usual MCP
 * host layout (every tool's schema as a JSON tool), plus what discovery costs when used.
 */
const bench: Bench = async () => {
  const servers = Array.from({ length: SERVERS }, (_, index) =>
    fixtureServer(`server_${index + 1}`, 'generated', { args: [String(TOOLS_PER_SERVER), String(index)] }),
  );
  const registry = new SkillRegistry({ roots: [{ dir: BUILTIN_SKILLS_DIR, source: 'builtin' }] });
  const bare = registry.load();
  const handlers = builtinHandlers();
  const starts: number[] = [];
  let mcp: McpServers | null = null;
  for (let run = 0; run < STARTS; run++) {
    await mcp?.close();
    mcp = new McpServers({
      servers,
      handlers,
      onChange: () => undefined,
      logger: silentLogger(),
      callTimeoutMs: () => 30_000,
    });
    const started = performance.now();
    await mcp.start();
    starts.push(performance.now() - started);
  }
  registry.addProvider(mcp!);
  const withMcp = registry.refresh();
  const mcpSkills = [...withMcp.skills.values()].filter((skill) => skill.source === 'mcp').length;
  if (mcpSkills !== SERVERS * TOOLS_PER_SERVER) throw new Error(`expected 100 MCP skills, got ${mcpSkills}`);

  const asJsonTools: ToolDefinition[] = Array.from({ length: SERVERS }, (_, index) =>
    generatedTools(TOOLS_PER_SERVER, index).map((tool: Tool) => ({
      name: `server_${index + 1}__${tool.name}`,
      description: tool.description ?? '',
      parameters: tool.inputSchema as ToolDefinition['parameters'],
    })),
  ).flat();

  const progressive = (snapshot: typeof bare) =>
    prefixTokens(orchestratorSystemPrompt('multi_agent', snapshot), orchestratorTools('multi_agent'));
  const withoutServers = progressive(bare);
  const steward = progressive(withMcp);
  const schemas = withoutServers + prefixTokensOfTools(asJsonTools);
  const direct = prefixTokens(orchestratorSystemPrompt('direct', withMcp), [
    ...orchestratorTools('direct'),
    ...directTools(withMcp, handlers),
  ]);
  const domainPage = countTokens(getSkill(withMcp, { path: 'server_1' }).content);
  const skillPages = [...withMcp.skills.values()]
    .filter((skill) => skill.source === 'mcp')
    .map((skill) => countTokens(getSkill(withMcp, { path: skill.name }).content));
  await mcp!.close();

  const sections: BenchSection[] = [
    {
      title: 'MCP servers: orchestrator prefix, tokens',
      description: `o200k_base tokens of the stable prefix (system prompt + tools) with ${SERVERS} stdio MCP servers of ${TOOLS_PER_SERVER} tools each (test fixture servers with realistic schemas), multi_agent mode.`,
      columns: ['layout', 'prefix tokens', 'added by the 5 servers'],
      rows: [
        ['built-in skills only (no MCP server)', withoutServers, 0],
        [
          'Steward: each server one domain line, tools found with get_skill',
          steward,
          steward - withoutServers,
        ],
        [
          'the 100 tools as JSON tools (name, description, input schema as the servers sent them)',
          schemas,
          schemas - withoutServers,
        ],
        ["Steward's direct mode (every skill, MCP ones included, its own JSON tool)", direct, '—'],
      ],
      notes: [
        `Discovery is paid only when used: get_skill for one server's page costs ${domainPage} tokens; one tool's page ${Math.round(percentile(skillPages, 50))} tokens (p50; max ${Math.max(...skillPages)}).`,
        `Connecting the 5 servers (spawn, initialize, tools/list, in parallel): p50 ${ms(percentile(starts, 50))} over ${STARTS} starts.`,
      ],
    },
  ];
  return sections;
};

function prefixTokensOfTools(tools: readonly ToolDefinition[]): number {
  return prefixTokens('', tools);
}

export default bench;
