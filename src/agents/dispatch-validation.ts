import { z } from 'zod';
import type { AgentSpec } from './agent-types.ts';

const AGENT_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/i;
export const MAX_TOOL_CALLS_LIMIT = 20;

/** Arguments of the `dispatch_agent` tool; the JSON tool schema is generated from this. */
export const dispatchAgentArgs = z.strictObject({
  agent_id: z
    .string()
    .describe('Unique id for this agent, e.g. "email_agent" or "task_search". Used in depends_on.'),
  mission: z
    .string()
    .describe(
      'Clear, specific instructions: what to accomplish, the inputs, the expected output and success criteria.',
    ),
  skills: z
    .array(z.string())
    .describe(
      'Skills the agent may use, e.g. ["tasks.search", "email.send"], or a whole domain as "email.*". ' +
        'The agent sees only these.',
    ),
  context: z
    .string()
    .optional()
    .describe('Extra context the agent needs (user preferences, facts from earlier). Keep it concise.'),
  depends_on: z
    .array(z.string())
    .optional()
    .describe(
      'Ids of agents dispatched earlier this turn that must finish first; their results are given to ' +
        'this agent. Omit to run in parallel.',
    ),
  max_tool_calls: z
    .number()
    .int()
    .min(1)
    .max(MAX_TOOL_CALLS_LIMIT)
    .optional()
    .describe('Most tool calls the agent may make. Default 5; raise it for multi-step tasks.'),
  model: z.string().optional().describe('Model override for this agent. Omit to use the default.'),
});

export type DispatchAgentArgs = z.infer<typeof dispatchAgentArgs>;

/**
 * Parses raw `dispatch_agent` arguments (an object, or the JSON string a model sent). Explicit
 * `null`s are read as omitted fields, since models often send them for optional parameters.
 */
export function parseDispatchArgs(
  raw: unknown,
): { ok: true; spec: AgentSpec } | { ok: false; error: string } {
  let input = raw;
  if (typeof input === 'string') {
    try {
      input = JSON.parse(input);
    } catch {
      return { ok: false, error: 'dispatch_agent arguments are not valid JSON; send a JSON object.' };
    }
  }
  if (isPlainObject(input)) {
    input = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== null));
  }
  const parsed = dispatchAgentArgs.safeParse(input, { reportInput: true });
  if (!parsed.success) {
    const problems = parsed.error.issues.map(describeIssue);
    return { ok: false, error: `dispatch_agent arguments are invalid: ${problems.join('; ')}.` };
  }
  const args = parsed.data;
  const spec: AgentSpec = {
    agentId: args.agent_id,
    mission: args.mission,
    skills: args.skills,
    dependsOn: args.depends_on ?? [],
  };
  if (args.context !== undefined) spec.context = args.context;
  if (args.max_tool_calls !== undefined) spec.maxToolCalls = args.max_tool_calls;
  if (args.model !== undefined) spec.model = args.model;
  return { ok: true, spec };
}

/**
 * Everything wrong with dispatching `spec` next to the agents already dispatched this turn, as
 * sentences the model can act on; empty when the dispatch is fine. `knownSkill` is asked about
 * each granted entry exactly as written: an exact name (`email.send`) or a whole domain (`email.*`).
 */
export function validateDispatch(
  spec: AgentSpec,
  existing: ReadonlyMap<string, AgentSpec>,
  knownSkill: (name: string) => boolean,
): string[] {
  const problems: string[] = [];
  const id = spec.agentId;
  const validId = AGENT_ID.test(id);
  if (!validId) {
    problems.push(
      `agent_id ${quote(id)} is not valid: use 1-64 letters, digits, "_" or "-", starting with a letter ` +
        'or digit (e.g. "email_agent").',
    );
  }
  const duplicate = existing.has(id);
  if (duplicate) {
    problems.push(
      `An agent with agent_id ${quote(id)} was already dispatched this turn. Pick another agent_id, ` +
        `or use message_agent to send ${quote(id)} a follow-up.`,
    );
  }
  if (spec.mission.trim() === '') {
    problems.push(
      'mission is empty: say what the agent should accomplish, its inputs, the expected output and ' +
        'how to tell it succeeded.',
    );
  }
  if (spec.skills.length === 0) {
    problems.push(
      'skills is empty: grant at least one skill, e.g. "email.send", or a whole domain as "email.*". ' +
        'Call get_skill to find skill names.',
    );
  }
  const unknownSkills = spec.skills.filter((skill) => !knownSkill(skill));
  if (unknownSkills.length > 0) {
    const bareDomain = unknownSkills.find((skill) => !skill.includes('.'));
    const hint = bareDomain ? ` To grant a whole domain write ${quote(`${bareDomain}.*`)}.` : '';
    problems.push(
      `${plural(unknownSkills.length, 'Unknown skill', 'Unknown skills')}: ${quoteAll(unknownSkills)}. ` +
        `Call get_skill to look up the exact names.${hint}`,
    );
  }
  const selfDependency = spec.dependsOn.includes(id);
  if (selfDependency) {
    problems.push(`depends_on includes the agent itself (${quote(id)}); an agent cannot wait for itself.`);
  }
  const unknownDependencies = spec.dependsOn.filter(
    (dependency) => dependency !== id && !existing.has(dependency),
  );
  if (unknownDependencies.length > 0) {
    const known =
      existing.size > 0
        ? `Agents dispatched so far: ${quoteAll([...existing.keys()])}.`
        : 'No agents have been dispatched yet this turn.';
    problems.push(
      `depends_on names ${plural(unknownDependencies.length, 'an agent', 'agents')} not dispatched this ` +
        `turn: ${quoteAll(unknownDependencies)}. ${known} Dispatch a dependency before the agents that ` +
        'depend on it.',
    );
  }
  const range = `1 to ${MAX_TOOL_CALLS_LIMIT}`;
  const maxToolCalls = spec.maxToolCalls;
  if (maxToolCalls !== undefined && !(Number.isInteger(maxToolCalls) && maxToolCalls >= 1)) {
    problems.push(`max_tool_calls must be a whole number from ${range} (got ${maxToolCalls}).`);
  } else if (maxToolCalls !== undefined && maxToolCalls > MAX_TOOL_CALLS_LIMIT) {
    problems.push(
      `max_tool_calls must be a whole number from ${range} (got ${maxToolCalls}); split bigger work ` +
        'across several agents.',
    );
  }
  if (validId && !duplicate) {
    // Dependencies must already be dispatched, so a cycle needs an `existing` that was not built
    // one validated dispatch at a time (e.g. a batch checked together); check anyway.
    const withoutSelf = { ...spec, dependsOn: spec.dependsOn.filter((dependency) => dependency !== id) };
    const cycle = findCycle(new Map([[id, withoutSelf], ...existing]));
    if (cycle) {
      problems.push(
        `depends_on would create a cycle: ${cycle.join(' → ')} (each arrow reads "depends on"). ` +
          'Remove one of these dependencies.',
      );
    }
  }
  return problems;
}

/**
 * The first dependency cycle found, as a path that starts and ends on the same id
 * (`['a', 'b', 'a']`: a depends on b, b on a), or null. Ids missing from `specs` are ignored.
 */
export function findCycle(specs: ReadonlyMap<string, AgentSpec>): string[] | null {
  const finished = new Set<string>();
  const path: string[] = [];
  const onPath = new Set<string>();

  function visit(id: string): string[] | null {
    if (onPath.has(id)) return [...path.slice(path.indexOf(id)), id];
    if (finished.has(id)) return null;
    const spec = specs.get(id);
    if (!spec) return null;
    path.push(id);
    onPath.add(id);
    for (const dependency of spec.dependsOn) {
      const cycle = visit(dependency);
      if (cycle) return cycle;
    }
    path.pop();
    onPath.delete(id);
    finished.add(id);
    return null;
  }

  for (const id of specs.keys()) {
    const cycle = visit(id);
    if (cycle) return cycle;
  }
  return null;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const field = fieldName(issue.path);
  switch (issue.code) {
    case 'invalid_type':
      if (issue.path.length === 0) return 'the arguments must be a JSON object';
      if (issue.input === undefined) return `${field} is required`;
      return `${field} must be ${typeName(issue.expected)}`;
    case 'unrecognized_keys':
      return (
        `unknown ${plural(issue.keys.length, 'field', 'fields')} ${quoteAll(issue.keys)}; the fields are ` +
        `${Object.keys(dispatchAgentArgs.shape).join(', ')}`
      );
    case 'too_small':
    case 'too_big':
      return `${field} must be a whole number from 1 to ${MAX_TOOL_CALLS_LIMIT}`;
    default:
      return `${field}: ${issue.message}`;
  }
}

function fieldName(path: PropertyKey[]): string {
  let name = '';
  for (const part of path)
    name += typeof part === 'number' ? `[${part}]` : `${name ? '.' : ''}${String(part)}`;
  return name || 'arguments';
}

function typeName(expected: string): string {
  if (expected === 'int') return 'a whole number';
  if (expected === 'array') return 'an array of strings';
  if (expected === 'object') return 'an object';
  return `a ${expected}`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function quote(text: string): string {
  return JSON.stringify(text);
}

function quoteAll(texts: readonly string[]): string {
  return texts.map(quote).join(', ');
}

function plural(count: number, one: string, many: string): string {
  return count === 1 ? one : many;
}
