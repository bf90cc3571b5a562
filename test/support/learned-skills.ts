import { fileURLToPath } from 'node:url';
import type { Database, Queryable } from '../../src/db/index.ts';
import { recordSkillCall, type SkillCallEnd } from '../../src/skills/executions.ts';
import { LearnedSkills } from '../../src/skills/learned/learned-skills.ts';
import { SkillRegistry } from '../../src/skills/registry/index.ts';

/** The built-in skills shipped in `skills/`. */
export const BUILTIN_SKILLS_DIR = fileURLToPath(new URL('../../skills/', import.meta.url));

/**
 * Learned skills kept in `dir` on `database`, beside the built-in ones, with the registry that
 * reads them both (not loaded yet; each change reloads it).
 */
export function learnedSkillsIn(
  database: Database,
  dir: string,
): { registry: SkillRegistry; learned: LearnedSkills } {
  const registry = new SkillRegistry({
    roots: [
      { dir: BUILTIN_SKILLS_DIR, source: 'builtin' },
      { dir, source: 'user' },
    ],
  });
  const learned = new LearnedSkills({
    database,
    skillsDir: dir,
    builtinDir: BUILTIN_SKILLS_DIR,
    skills: () => registry.snapshot(),
    reload: () => void registry.load(),
  });
  return { registry, learned };
}

/**
 * Records one finished skill call typed on its own (no agent, no conversation; the command is the
 * skill's name), taking a millisecond: what usage statistics and skill reviews count.
 */
export function recordFinishedSkillCall(
  db: Queryable,
  call: {
    id: string;
    userId: string;
    skill: string;
    turnId?: string | null;
    at: Date;
    status: SkillCallEnd['status'];
  },
): Promise<void> {
  return recordSkillCall(
    db,
    {
      id: call.id,
      parentId: null,
      turnId: call.turnId ?? null,
      userId: call.userId,
      conversationId: null,
      agentId: null,
      mission: null,
      skill: call.skill,
      command: call.skill,
      flags: {},
      receipt: null,
    },
    call.at,
    { status: call.status, result: null, error: null, durationMs: 1 },
  );
}
