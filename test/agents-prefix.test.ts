import { describe, expect, it } from 'vitest';
import { prefixTokens } from '../src/agents/context-builder.ts';
import { orchestratorTools } from '../src/agents/orchestrator-tools.ts';
import { orchestratorSystemPrompt } from '../src/agents/prompts.ts';
import { BUILTIN_SKILLS_DIR } from '../src/runtime.ts';
import { loadSkillRoots, skillsVisibleTo } from '../src/skills/registry/index.ts';
import { writeLearnedSkills, writeSyntheticSkills } from './support/synthetic-skills.ts';

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

  it('grows by at most one line per new domain with 200 learned skills, and not at all for other users', () => {
    const base = multiAgentPrefix(builtin());
    const learned = writeLearnedSkills(200, 'alice');
    const snapshot = loadSkillRoots([
      { dir: BUILTIN_SKILLS_DIR, source: 'builtin' },
      { dir: learned.dir, source: 'user' },
    ]);
    expect(snapshot.diagnostics).toEqual([]);
    expect([...snapshot.skills.values()].filter((skill) => skill.owner === 'alice')).toHaveLength(200);
    const owner = multiAgentPrefix(skillsVisibleTo(snapshot, 'alice'));
    const baseLines = base.system.split('\n');
    const ownerLines = owner.system.split('\n');
    // Every line of the prefix stays as it was (built-in domains keep their own index line)…
    for (const line of baseLines) expect(ownerLines).toContain(line);
    // …and each new domain adds one line, however many skills it holds.
    const added = ownerLines.filter((line) => !baseLines.includes(line));
    expect(added).toHaveLength(learned.newDomains.length);
    for (const domain of learned.newDomains)
      expect(added.filter((line) => line.startsWith(`- ${domain}:`))).toHaveLength(1);
    expect(JSON.stringify(owner.tools)).toBe(JSON.stringify(base.tools));
    // A generated domain line names at most 6 of its skills: bounded, whatever the count.
    expect(owner.tokens - base.tokens).toBeLessThanOrEqual(40 * learned.newDomains.length);
    // Another user's prompt is byte for byte the one without them.
    expect(multiAgentPrefix(skillsVisibleTo(snapshot, 'bob')).system).toBe(base.system);
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
