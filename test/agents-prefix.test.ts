import { describe, expect, it } from 'vitest';
import { prefixTokens } from '../src/agents/context-builder.ts';
import { orchestratorTools } from '../src/agents/orchestrator-tools.ts';
import { orchestratorSystemPrompt } from '../src/agents/prompts.ts';
import { BUILTIN_SKILLS_DIR } from '../src/runtime.ts';
import { loadSkillRoots } from '../src/skills/registry/index.ts';
import { writeSyntheticSkills } from './support/synthetic-skills.ts';

const builtin = () => loadSkillRoots([{ dir: BUILTIN_SKILLS_DIR, source: 'builtin' }]);

function multiAgentPrefix(snapshot: ReturnType<typeof builtin>) {
  const system = orchestratorSystemPrompt('multi_agent', snapshot);
  const tools = orchestratorTools('multi_agent');
  return { system, tools, tokens: prefixTokens(system, tools) };
}

describe('orchestrator prompt prefix', () => {
  it('is at most 1,500 tokens (o200k) with the built-in skills', () => {
    expect(multiAgentPrefix(builtin()).tokens).toBeLessThanOrEqual(1_500);
  });

  it('grows by less than 200 tokens when 500 skills in 10 new domains are added', () => {
    const base = multiAgentPrefix(builtin()).tokens;
    const extra = writeSyntheticSkills(500, 10);
    const snapshot = loadSkillRoots([
      { dir: BUILTIN_SKILLS_DIR, source: 'builtin' },
      { dir: extra, source: 'user' },
    ]);
    expect(snapshot.skills.size).toBeGreaterThanOrEqual(505);
    const grown = multiAgentPrefix(snapshot).tokens;
    expect(grown).toBeGreaterThan(base);
    expect(grown - base).toBeLessThan(200);
  });

  it('holds no timestamp or id and is the same for the same skill set', () => {
    const first = multiAgentPrefix(builtin());
    const second = multiAgentPrefix(builtin());
    expect(JSON.stringify(second)).toBe(JSON.stringify(first));
    const text = first.system + JSON.stringify(first.tools);
    expect(text).not.toMatch(/\d{4}-\d{2}-\d{2}/);
    expect(text).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}/);
  });
});
