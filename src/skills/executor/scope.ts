import type { SkillDefinition } from '../types.ts';

/** Who is calling: decides which skills are in scope (DESIGN invariant 4). */
export type Caller =
  | { kind: 'orchestrator'; allowMutating: boolean }
  | {
      kind: 'agent';
      agentId: string;
      grantedSkills: readonly string[];
      mission: string;
      parentExecutionId: string | null;
    }
  | { kind: 'cli' };

/** Returns a reason when `skill` is out of the caller's scope, else null. */
export type ScopeCheck = (skill: SkillDefinition, caller: Caller) => string | null;

/** Matches a granted skill list: exact names, or `domain.*` for a whole domain. */
export function isGranted(skill: string, granted: readonly string[]): boolean {
  const domain = skill.split('.')[0];
  return granted.some((entry) => entry === skill || entry === `${domain}.*`);
}

export const defaultScopeCheck: ScopeCheck = (skill, caller) => {
  if (caller.kind === 'agent' && !isGranted(skill.name, caller.grantedSkills)) {
    return `${skill.name} is not among this agent's granted skills (${caller.grantedSkills.join(', ') || 'none'}). Do only your mission with the skills you were given, and report what else is needed.`;
  }
  if (caller.kind === 'orchestrator' && !caller.allowMutating && !skill.readonly) {
    return `${skill.name} changes data, so the orchestrator cannot run it directly. Delegate it: dispatch_agent with skills ["${skill.name}"] and a mission.`;
  }
  return null;
};
