import type { WireMessage } from '../../src/llm/wire.ts';
import type { FakeLlm, FakeReply, FakeRequest, FakeStep, FakeToolCall } from './fake-llm.ts';
import { ROLE_MODELS } from './steward.ts';

/*
 * Scripts the fake LLM by role, so an end-to-end scenario reads as what each model says:
 * the orchestrator's steps in order, each sub-agent's steps in order (the agent is recognized
 * by the mission it was dispatched with), the sentinel's answers in order. Strict like the
 * fake: a request with no step left, or a step left unconsumed, fails `assertDone()`.
 */

/** A step, or a function of the request that returns one (to answer from what the model was shown). */
export type ScriptStep = FakeStep | ((request: FakeRequest) => FakeStep);

/** Answers every further request of its role until `extend` adds steps to it; never left unconsumed. */
export type Forever = { forever: ScriptStep };

export type RoleScript = Array<ScriptStep | Forever>;

export type ModelScript = {
  orchestrator?: RoleScript;
  /** By agent id; the agent's requests are matched through the mission it was dispatched with. */
  agents?: Record<string, RoleScript>;
  sentinel?: RoleScript;
  /** Only when the test config turns memory on (`writeTestConfig(…, {memory: true})`). */
  compaction?: RoleScript;
  /**
   * Agents dispatched before this script took over, by id, with their missions (a turn that
   * runs again after a crash, from its stored dispatch_agent calls).
   */
  dispatched?: Record<string, string>;
};

/** The requests this script answered, by role (a later script on the same fake starts afresh). */
export type ScriptedModels = {
  orchestratorRequests(): FakeRequest[];
  /** One agent's requests, or every sub-agent request. */
  agentRequests(agentId?: string): FakeRequest[];
  sentinelRequests(): FakeRequest[];
  compactionRequests(): FakeRequest[];
  /** Queues more steps (the next turn of a conversation); agents dispatched earlier stay known. */
  extend(script: ModelScript): void;
  /** Fails on steps left unconsumed and on anything the fake saw that nobody scripted. */
  assertDone(): void;
};

/** Installs `script` on `fake` (through `respondWith`, so nothing else may be queued on it). */
export function scriptModels(fake: FakeLlm, script: ModelScript): ScriptedModels {
  const queues = new Map<string, RoleScript>();
  const missions = new Map<string, string>();
  const agentOf = new WeakMap<FakeRequest, string>();
  const answered: FakeRequest[] = [];

  const extend = (more: ModelScript) => {
    const add = (key: string, steps: RoleScript | undefined) => {
      if (!steps) return;
      const kept = (queues.get(key) ?? []).filter((step) => !isForever(step));
      queues.set(key, [...kept, ...steps]);
    };
    add('orchestrator', more.orchestrator);
    add('sentinel', more.sentinel);
    add('compaction', more.compaction);
    for (const [agentId, steps] of Object.entries(more.agents ?? {})) add(`agent ${agentId}`, steps);
    for (const [agentId, mission] of Object.entries(more.dispatched ?? {})) missions.set(mission, agentId);
  };
  extend(script);

  const next = (key: string, request: FakeRequest): FakeStep => {
    const queue = queues.get(key) ?? [];
    const head = queue[0];
    if (head === undefined) {
      const last = request.body.messages?.at(-1);
      const shown = last ? messageText(last.content).slice(0, 200) : '(no messages)';
      throw new Error(`no scripted step left for ${key}; last message: ${shown}`);
    }
    let step: ScriptStep;
    if (isForever(head)) step = head.forever;
    else {
      queue.shift();
      step = head;
    }
    return typeof step === 'function' ? step(request) : step;
  };

  fake.respondWith((request) => {
    answered.push(request);
    const model = request.body.model;
    if (model === ROLE_MODELS.orchestrator) {
      const step = next('orchestrator', request);
      for (const call of 'toolCalls' in step ? (step.toolCalls ?? []) : []) {
        if (call.name === 'dispatch_agent' && typeof call.arguments === 'object') {
          missions.set(String(call.arguments.mission), String(call.arguments.agent_id));
        }
      }
      return step;
    }
    if (model === ROLE_MODELS.sentinel) return next('sentinel', request);
    if (model === ROLE_MODELS.compaction) return next('compaction', request);
    if (model === ROLE_MODELS.sub_agent) {
      const mission = missionOf(request);
      const agentId = missions.get(mission);
      if (agentId === undefined)
        throw new Error(`sub-agent request for a mission never dispatched: ${mission}`);
      agentOf.set(request, agentId);
      return next(`agent ${agentId}`, request);
    }
    throw new Error(`request for a model no role uses: ${model}`);
  });

  const byModel = (model: string) => answered.filter((request) => request.body.model === model);
  return {
    orchestratorRequests: () => byModel(ROLE_MODELS.orchestrator),
    agentRequests: (agentId) =>
      byModel(ROLE_MODELS.sub_agent).filter(
        (request) => agentId === undefined || agentOf.get(request) === agentId,
      ),
    sentinelRequests: () => byModel(ROLE_MODELS.sentinel),
    compactionRequests: () => byModel(ROLE_MODELS.compaction),
    extend,
    assertDone() {
      const left = [...queues.entries()]
        .map(([key, queue]) => [key, queue.filter((step) => !isForever(step))] as const)
        .filter(([, queue]) => queue.length > 0)
        .map(([key, queue]) => `${key}: ${queue.length} step(s) never consumed`);
      if (left.length) throw new Error(`scripted models:\n- ${left.join('\n- ')}`);
      fake.assertDone();
    },
  };
}

function isForever(step: ScriptStep | Forever): step is Forever {
  return typeof step === 'object' && 'forever' in step;
}

// ---------------------------------------------------------------------------------------------
// What the models say.

export type DispatchArgs = {
  agent_id: string;
  mission: string;
  skills: string[];
  depends_on?: string[];
  context?: string;
  max_tool_calls?: number;
};

export const reply = (text: string, options: Omit<FakeReply, 'text'> = {}): FakeReply => ({
  text,
  ...options,
});

export const toolCall = (name: string, args: Record<string, unknown> | string): FakeToolCall => ({
  name,
  arguments: args,
});

/** One response with these tool calls, in order. */
export const callTools = (...calls: FakeToolCall[]): FakeReply => ({ toolCalls: calls });

export const callTool = (name: string, args: Record<string, unknown> | string): FakeReply =>
  callTools(toolCall(name, args));

/** `run {command}`: the orchestrator's read-only run, or a sub-agent's one tool. */
export const run = (command: string): FakeReply => callTool('run', { command });

/** One response dispatching every given agent. */
export const dispatch = (...agents: DispatchArgs[]): FakeReply =>
  callTools(...agents.map((agent) => toolCall('dispatch_agent', agent)));

export const getResults = (agentIds?: string[]): FakeReply =>
  callTool('get_agent_results', agentIds ? { agent_ids: agentIds } : {});

export const approve = (reasoning = 'The user asked for exactly this.'): FakeReply =>
  reply(JSON.stringify({ reasoning, decision: true }));

export const refuse = (reasoning: string): FakeReply => reply(JSON.stringify({ reasoning, decision: false }));

export const forever = (step: ScriptStep): Forever => ({ forever: step });

/** `step`, answered only after `latencyMs`. */
export const slow = <T extends FakeStep>(latencyMs: number, step: T): T => ({ ...step, latencyMs });

// ---------------------------------------------------------------------------------------------
// What the models were shown.

export function messageText(content: WireMessage['content'] | undefined): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/** The contents of the request's tool messages, in order. */
export function toolResults(request: FakeRequest): string[] {
  return (request.body.messages ?? []).flatMap((message) =>
    message.role === 'tool' ? [messageText(message.content)] : [],
  );
}

/**
 * A turn in which the sub-agent `maker` creates the task `title` (the sentinel approving) and
 * the reply says so: what a test needs for one receipt.
 */
export function createTaskScript(title: string): ModelScript {
  return {
    orchestrator: [
      dispatch({ agent_id: 'maker', mission: `Create the task "${title}"`, skills: ['tasks.create'] }),
      getResults(),
      reply(`Added "${title}".`),
    ],
    agents: { maker: [run(`tasks.create --title "${title}"`), reply('Created.')] },
    sentinel: [approve()],
  };
}

export function lastToolResult(request: FakeRequest): string {
  const results = toolResults(request);
  const last = results.at(-1);
  if (last === undefined) throw new Error('the request has no tool result');
  return last;
}

/** A sub-agent's brief: its first user message (mission, context, dependency results). */
export function agentBrief(request: FakeRequest): string {
  const first = (request.body.messages ?? []).find((message) => message.role === 'user');
  return messageText(first?.content);
}

function missionOf(request: FakeRequest): string {
  const match = /^Mission: ([\s\S]*?)(?:\n\n|$)/.exec(agentBrief(request));
  return match?.[1] ?? '';
}

/** Both requests were in flight at some common moment (from the fake's own records). */
export function overlapInTime(a: FakeRequest, b: FakeRequest): boolean {
  if (a.finishedAt === null || b.finishedAt === null) throw new Error('a request never finished');
  return a.receivedAt < b.finishedAt && b.receivedAt < a.finishedAt;
}
