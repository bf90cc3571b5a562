import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AgentSpec } from './agent-types.ts';
import { dispatchAgentArgs, findCycle, parseDispatchArgs, validateDispatch } from './dispatch-validation.ts';

const SKILLS = new Set(['email.send', 'email.search', 'tasks.search', 'email.*', 'tasks.*']);
const knownSkill = (name: string) => SKILLS.has(name);

function spec(agentId: string, overrides: Partial<AgentSpec> = {}): AgentSpec {
  return {
    agentId,
    mission: `Do the ${agentId} work.`,
    skills: ['tasks.search'],
    dependsOn: [],
    ...overrides,
  };
}

function specs(...list: AgentSpec[]): Map<string, AgentSpec> {
  return new Map(list.map((item) => [item.agentId, item]));
}

describe('validateDispatch', () => {
  it('accepts a well-formed dispatch with exact and whole-domain skills and known dependencies', () => {
    const existing = specs(spec('task_search'), spec('inbox-scan', { skills: ['email.*'] }));
    const problems = validateDispatch(
      spec('email_report', {
        skills: ['email.send', 'tasks.*'],
        dependsOn: ['task_search', 'inbox-scan'],
        maxToolCalls: 20,
      }),
      existing,
      knownSkill,
    );
    expect(problems).toEqual([]);
  });

  it.each(['', 'has space', '_leading', 'a'.repeat(65), 'émoji'])('rejects agent_id %j', (agentId) => {
    const problems = validateDispatch(spec(agentId), new Map(), knownSkill);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('agent_id');
    expect(problems[0]).toContain(JSON.stringify(agentId));
  });

  it('accepts the longest and shortest valid ids', () => {
    expect(validateDispatch(spec('A'), new Map(), knownSkill)).toEqual([]);
    expect(validateDispatch(spec(`9${'x'.repeat(63)}`), new Map(), knownSkill)).toEqual([]);
  });

  it('rejects an id already dispatched this turn and points to message_agent', () => {
    const [problem, ...rest] = validateDispatch(spec('search'), specs(spec('search')), knownSkill);
    expect(rest).toEqual([]);
    expect(problem).toMatch(/"search" was already dispatched this turn/);
    expect(problem).toContain('Pick another agent_id');
    expect(problem).toContain('message_agent');
  });

  it('rejects a blank mission', () => {
    const problems = validateDispatch(spec('a', { mission: '  \n ' }), new Map(), knownSkill);
    expect(problems).toEqual([expect.stringMatching(/^mission is empty/)]);
  });

  it('rejects an empty skill list', () => {
    const problems = validateDispatch(spec('a', { skills: [] }), new Map(), knownSkill);
    expect(problems).toEqual([expect.stringMatching(/^skills is empty/)]);
  });

  it('names every unknown skill and suggests get_skill', () => {
    const problems = validateDispatch(
      spec('a', { skills: ['email.sned', 'tasks.search', 'calendar.*'] }),
      new Map(),
      knownSkill,
    );
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('Unknown skills: "email.sned", "calendar.*"');
    expect(problems[0]).toContain('get_skill');
  });

  it('asks knownSkill about each entry as written and hints at domain.* for a bare domain', () => {
    const asked: string[] = [];
    const problems = validateDispatch(spec('a', { skills: ['email', 'tasks.*'] }), new Map(), (name) => {
      asked.push(name);
      return knownSkill(name);
    });
    expect(asked).toEqual(['email', 'tasks.*']);
    expect(problems).toEqual([expect.stringContaining('Unknown skill: "email"')]);
    expect(problems[0]).toContain('write "email.*"');
  });

  it('lists the known ids when a dependency is unknown', () => {
    const problems = validateDispatch(
      spec('report', { dependsOn: ['task_search', 'serach'] }),
      specs(spec('task_search'), spec('inbox')),
      knownSkill,
    );
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('not dispatched this turn: "serach"');
    expect(problems[0]).toContain('Agents dispatched so far: "task_search", "inbox"');
  });

  it('says when no agents were dispatched yet', () => {
    const problems = validateDispatch(spec('report', { dependsOn: ['search'] }), new Map(), knownSkill);
    expect(problems).toEqual([expect.stringContaining('No agents have been dispatched yet this turn')]);
  });

  it('rejects a self-dependency once, not also as unknown or as a cycle', () => {
    const problems = validateDispatch(spec('loop', { dependsOn: ['loop'] }), new Map(), knownSkill);
    expect(problems).toEqual([expect.stringContaining('depends_on includes the agent itself ("loop")')]);
  });

  it('names the path of a three-agent cycle', () => {
    // `existing` as a batch checked together could hold it: a waits for c, b for a; now c waits for b.
    const existing = specs(spec('a', { dependsOn: ['c'] }), spec('b', { dependsOn: ['a'] }));
    const problems = validateDispatch(spec('c', { dependsOn: ['b'] }), existing, knownSkill);
    expect(problems).toEqual([expect.stringContaining('depends_on would create a cycle: c → b → a → c')]);
  });

  it.each([0, 21, 2.5, -1])('rejects max_tool_calls %s', (maxToolCalls) => {
    const problems = validateDispatch(spec('a', { maxToolCalls }), new Map(), knownSkill);
    expect(problems).toEqual([
      expect.stringContaining(`max_tool_calls must be a whole number from 1 to 20 (got ${maxToolCalls})`),
    ]);
  });

  it('reports every problem at once', () => {
    const problems = validateDispatch(
      { agentId: 'bad id', mission: '', skills: [], dependsOn: ['ghost'], maxToolCalls: 99 },
      new Map(),
      knownSkill,
    );
    expect(problems.map((problem) => problem.split(' ')[0])).toEqual([
      'agent_id',
      'mission',
      'skills',
      'depends_on',
      'max_tool_calls',
    ]);
  });
});

describe('findCycle', () => {
  it('returns null for a diamond', () => {
    const graph = specs(
      spec('a'),
      spec('b', { dependsOn: ['a'] }),
      spec('c', { dependsOn: ['a'] }),
      spec('d', { dependsOn: ['b', 'c'] }),
    );
    expect(findCycle(graph)).toBeNull();
  });

  it('returns the cycle path, ignoring the agents leading into it and unknown ids', () => {
    const graph = specs(
      spec('entry', { dependsOn: ['x', 'ghost'] }),
      spec('x', { dependsOn: ['y'] }),
      spec('y', { dependsOn: ['x'] }),
    );
    expect(findCycle(graph)).toEqual(['x', 'y', 'x']);
  });

  it('finds a self-loop', () => {
    expect(findCycle(specs(spec('a', { dependsOn: ['a'] })))).toEqual(['a', 'a']);
  });
});

describe('parseDispatchArgs', () => {
  it('maps the tool arguments onto an AgentSpec', () => {
    const parsed = parseDispatchArgs({
      agent_id: 'email_report',
      mission: 'Send the report.',
      skills: ['email.send'],
      context: 'Bob prefers short emails.',
      depends_on: ['task_search'],
      max_tool_calls: 3,
      model: 'openai/gpt-5-mini',
    });
    expect(parsed).toEqual({
      ok: true,
      spec: {
        agentId: 'email_report',
        mission: 'Send the report.',
        skills: ['email.send'],
        context: 'Bob prefers short emails.',
        dependsOn: ['task_search'],
        maxToolCalls: 3,
        model: 'openai/gpt-5-mini',
      },
    });
  });

  it('defaults depends_on to [], reads a JSON string, and treats null as omitted', () => {
    const parsed = parseDispatchArgs(
      JSON.stringify({ agent_id: 'a', mission: 'm', skills: ['x.y'], context: null, max_tool_calls: null }),
    );
    expect(parsed).toEqual({
      ok: true,
      spec: { agentId: 'a', mission: 'm', skills: ['x.y'], dependsOn: [] },
    });
  });

  it('names each missing or mistyped field', () => {
    const parsed = parseDispatchArgs({ mission: 42, skills: ['ok', 7], max_tool_calls: 2.5 });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.error).toContain('agent_id is required');
    expect(parsed.error).toContain('mission must be a string');
    expect(parsed.error).toContain('skills[1] must be a string');
    expect(parsed.error).toContain('max_tool_calls must be a whole number');
  });

  it('rejects max_tool_calls out of range and a skills value that is not an array', () => {
    const parsed = parseDispatchArgs({
      agent_id: 'a',
      mission: 'm',
      skills: 'email.send',
      max_tool_calls: 50,
    });
    expect(parsed).toEqual({
      ok: false,
      error: expect.stringContaining('skills must be an array of strings'),
    });
    expect(parsed.ok || parsed.error).toContain('max_tool_calls must be a whole number from 1 to 20');
  });

  it('rejects unknown fields instead of silently dropping them', () => {
    const parsed = parseDispatchArgs({ agent_id: 'a', mission: 'm', skills: ['x.y'], dependsOn: ['b'] });
    expect(parsed).toEqual({ ok: false, error: expect.stringContaining('unknown field "dependsOn"') });
    expect(parsed.ok || parsed.error).toContain('depends_on');
  });

  it('rejects arguments that are not an object or not JSON', () => {
    expect(parseDispatchArgs(['a'])).toEqual({
      ok: false,
      error: expect.stringContaining('must be a JSON object'),
    });
    expect(parseDispatchArgs('{"agent_id": ')).toEqual({
      ok: false,
      error: expect.stringContaining('not valid JSON'),
    });
  });

  it('describes every field in the generated JSON schema', () => {
    const schema = z.toJSONSchema(dispatchAgentArgs) as {
      properties: Record<string, { description?: string }>;
      required: string[];
    };
    expect(Object.keys(schema.properties)).toEqual([
      'agent_id',
      'mission',
      'skills',
      'context',
      'depends_on',
      'max_tool_calls',
      'model',
    ]);
    for (const property of Object.values(schema.properties)) expect(property.description).toBeTruthy();
    expect(schema.required).toEqual(['agent_id', 'mission', 'skills']);
  });
});
