import type { ToolDefinition } from '../llm/index.ts';
import type { SkillHandler, SkillSnapshot } from '../skills/index.ts';
import { formatCommand } from '../skills/index.ts';
import { jsonSchemaOf, sortTools } from './tool-schema.ts';

/** `tasks.create` ↔ `tasks__create`: providers allow only [a-zA-Z0-9_-] in tool names. */
export const toolNameOf = (skill: string) => skill.replace('.', '__');
const skillNameOf = (tool: string) => tool.replace('__', '.');

/**
 * `direct` mode: every skill as its own JSON tool (the N-tool baseline the seeds argue
 * against; kept for comparison and benchmarks).
 */
export function directTools(
  snapshot: SkillSnapshot,
  handlers: ReadonlyMap<string, SkillHandler>,
): ToolDefinition[] {
  const tools: ToolDefinition[] = [];
  for (const skill of snapshot.skills.values()) {
    const handler = handlers.get(skill.handler);
    tools.push({
      name: toolNameOf(skill.name),
      description: skill.description,
      parameters: handler ? jsonSchemaOf(handler.flags) : { type: 'object', properties: {} },
    });
  }
  return sortTools(tools);
}

/** The command a direct-mode tool call stands for, or null when the tool names no skill. */
export function directToolCommand(
  snapshot: SkillSnapshot,
  tool: string,
  args: Record<string, unknown>,
): string | null {
  const skill = skillNameOf(tool);
  if (!snapshot.skills.has(skill)) return null;
  return formatCommand(skill, flagsFromJson(args));
}

/** JSON tool arguments → command flags (`use_skill` and direct mode). */
export function flagsFromJson(args: Record<string, unknown>): Record<string, string | true | string[]> {
  const flags: Record<string, string | true | string[]> = {};
  for (const [key, value] of Object.entries(args)) {
    if (value === null || value === undefined || value === false) continue;
    if (value === true) flags[key] = true;
    else if (Array.isArray(value)) flags[key] = value.map((item) => String(item));
    else if (typeof value === 'object') flags[key] = JSON.stringify(value);
    else flags[key] = String(value);
  }
  return flags;
}
