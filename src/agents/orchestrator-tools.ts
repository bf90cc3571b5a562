import { z } from 'zod';
import type { ChannelMode } from '../config/index.ts';
import type { ToolDefinition } from '../llm/index.ts';
import { dispatchAgentArgs } from './dispatch-validation.ts';
import { sortTools, toolFromZod } from './tool-schema.ts';

export const getSkillArgs = z
  .object({
    path: z
      .string()
      .optional()
      .describe('A domain (tasks), a skill (tasks.create) or all of a domain (tasks.all).'),
    search: z.string().optional().describe('Words to find skills by name, description and tags.'),
  })
  .strict();

export const runArgs = z
  .object({ command: z.string().min(1).describe('One skill command, e.g. tasks.search --query "report"') })
  .strict();

export const useSkillArgs = z
  .object({
    skill: z.string().min(1).describe('Skill name, e.g. tasks.create'),
    arguments: z
      .record(z.string(), z.unknown())
      .default({})
      .describe('Flags as an object, e.g. {"title": "Report", "priority": "high"}'),
  })
  .strict();

export const getAgentResultsArgs = z
  .object({
    agent_ids: z.array(z.string()).optional().describe('Agents to wait for; omit to run and wait for all.'),
  })
  .strict();

export const messageAgentArgs = z
  .object({
    agent_id: z.string().min(1).describe('A finished agent of this turn.'),
    message: z.string().min(1).describe('Follow-up instructions; the agent continues with its skills.'),
  })
  .strict();

const GET_SKILL = toolFromZod(
  'get_skill',
  'Discover skills: no arguments lists domains; path shows a domain, a skill page, or domain.all; search finds skills.',
  getSkillArgs,
);

const toolsByMode = new Map<ChannelMode, readonly ToolDefinition[]>();

/**
 * The tools of each mode, sorted by name. `direct` mode adds one tool per skill elsewhere.
 * Built once per mode (their JSON schemas never change while the process runs).
 */
export function orchestratorTools(mode: ChannelMode): ToolDefinition[] {
  let tools = toolsByMode.get(mode);
  if (!tools) {
    tools = Object.freeze(buildOrchestratorTools(mode).map((tool) => Object.freeze(tool)));
    toolsByMode.set(mode, tools);
  }
  return [...tools];
}

function buildOrchestratorTools(mode: ChannelMode): ToolDefinition[] {
  if (mode === 'multi_agent') {
    return sortTools([
      GET_SKILL,
      toolFromZod(
        'run',
        'Run one read-only skill command (search/get/list/read) and get its result.',
        runArgs,
      ),
      toolFromZod(
        'dispatch_agent',
        'Queue a sub-agent with a mission and only the skills it needs. Agents without depends_on run in parallel.',
        dispatchAgentArgs,
      ),
      toolFromZod(
        'get_agent_results',
        'Run the queued agents (dependencies first) and return their results.',
        getAgentResultsArgs,
      ),
      toolFromZod(
        'message_agent',
        'Send a follow-up to a finished agent and get its new result.',
        messageAgentArgs,
      ),
    ]);
  }
  if (mode === 'single_loop') {
    return sortTools([
      GET_SKILL,
      toolFromZod('run', 'Run one skill command and get its result.', runArgs),
      toolFromZod('use_skill', 'Run one skill with its flags as a JSON object.', useSkillArgs),
    ]);
  }
  return [GET_SKILL];
}
