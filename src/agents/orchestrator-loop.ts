import type { ChannelMode, Limits } from '../config/index.ts';
import { errorMessage } from '../errors.ts';
import type { ChatMessage, ChatResponse, ToolCall, ToolDefinition } from '../llm/index.ts';
import { emptyUsage, LlmError } from '../llm/index.ts';
import { formatCommand, getSkill, recordSkippedAgent, type UnavailableDomain } from '../skills/index.ts';
import { type AgentResult, type AgentSpec, plainResult } from './agent-types.ts';
import { withCacheBreakpoints } from './context-builder.ts';
import { formatAgentResults, runDag } from './dag-scheduler.ts';
import { directToolCommand, flagsFromJson } from './direct-tools.ts';
import { parseDispatchArgs, validateDispatch } from './dispatch-validation.ts';
import { emitSkillCall } from './events.ts';
import {
  getAgentResultsArgs,
  getSkillArgs,
  messageAgentArgs,
  runArgs,
  useSkillArgs,
} from './orchestrator-tools.ts';
import { resultForModel } from './result-for-model.ts';
import {
  type PendingConfirmation,
  runSubAgent,
  type SubAgentDeps,
  type SubAgentOutcome,
  type TurnScope,
} from './sub-agent.ts';
import { describeArgumentErrors, withArgumentsNote } from './tool-schema.ts';
import type { TurnBudget } from './turn-budget.ts';

/** The agents of one turn (and of the turn it resumes): dispatched specs and their outcomes. */
export type AgentBoard = {
  specs: Map<string, AgentSpec>;
  outcomes: Map<string, SubAgentOutcome>;
};

/** The orchestrator loop needs exactly what its sub-agents need. */
export type LoopDeps = SubAgentDeps;

export type LoopInput = {
  mode: ChannelMode;
  turn: TurnScope;
  /** Domains the user cannot use now; get_skill says how to connect them. */
  unavailable?: readonly UnavailableDomain[];
  /** System, context and history: the part of the request that stays fixed during the turn. */
  prefix: ChatMessage[];
  tools: ToolDefinition[];
  /** This turn's messages so far (the new user message first); appended to as the loop runs. */
  turnMessages: ChatMessage[];
  board: AgentBoard;
  budget: TurnBudget;
  limits: Limits;
  signal: AbortSignal;
  /** Called with every message the loop adds, so nothing is lost if the process dies. */
  persist: (message: ChatMessage) => Promise<void>;
  onDelta?: (text: string) => void;
};

export type LoopOutcome =
  /** The model's final answer, not yet stored; empty when it gave none even when asked again. */
  | { kind: 'reply'; text: string }
  | { kind: 'limit'; reason: string }
  | { kind: 'confirmation'; pending: PendingConfirmation; text: string }
  | { kind: 'error'; error: string };

/** Said to the model once when its final answer was empty. */
export const EMPTY_ANSWER_NUDGE =
  'Your last answer was empty. Write your answer to the user now: what was done (see the results above) and anything they need to know.';

/**
 * The orchestrator's loop: call the model, run its tool calls, feed results back, until it
 * answers in text, a limit trips, or an action needs the user's confirmation. Every iteration
 * takes from the turn budget, so the loop always terminates (DESIGN invariant 3).
 */
export async function runOrchestratorLoop(deps: LoopDeps, input: LoopInput): Promise<LoopOutcome> {
  const confirmations: PendingConfirmation[] = [];
  let nudged = false;
  let askingAgain = false;
  for (;;) {
    // The one call that asks again after an empty answer takes no iteration: `nudged` bounds it.
    if (askingAgain) askingAgain = false;
    else if (!input.budget.takeIteration()) return { kind: 'limit', reason: input.budget.tripped! };
    let response: ChatResponse;
    try {
      response = await deps.llm.chat({
        role: 'orchestrator',
        messages: withCacheBreakpoints([...input.prefix, ...input.turnMessages]),
        tools: input.tools,
        sessionId: input.turn.conversationId,
        signal: input.signal,
        onDelta: input.onDelta,
        context: {
          turnId: input.turn.turnId,
          conversationId: input.turn.conversationId,
          userId: input.turn.userId,
        },
      });
    } catch (error) {
      const message = error instanceof LlmError ? error.message : errorMessage(error);
      if (!(error instanceof LlmError)) deps.logger.error({ err: error }, 'orchestrator call failed');
      return { kind: 'error', error: message };
    }
    deps.emit({
      type: 'llm_call',
      role: 'orchestrator',
      model: response.model,
      usage: response.usage,
      latencyMs: response.latencyMs,
      agentId: null,
    });
    if (response.toolCalls.length === 0) {
      const text = response.text.trim();
      if (!text && !nudged) {
        // An empty final answer: ask once more for the answer, rather than telling the user "Done.".
        nudged = true;
        askingAgain = true;
        const nudge: ChatMessage = { role: 'system', content: EMPTY_ANSWER_NUDGE };
        input.turnMessages.push(nudge);
        await input.persist(nudge);
        continue;
      }
      // The caller stores the final answer (with its receipts); an empty one means none came.
      input.turnMessages.push({ role: 'assistant', content: text });
      return { kind: 'reply', text };
    }
    const assistant: ChatMessage = {
      role: 'assistant',
      content: response.text || null,
      toolCalls: response.toolCalls,
    };
    input.turnMessages.push(assistant);
    await input.persist(assistant);
    for (const call of response.toolCalls) {
      deps.emit({ type: 'tool_call', name: call.name, arguments: call.arguments });
      const content =
        call.argumentsError ??
        withArgumentsNote(call.argumentsNote, await handleToolCall(deps, input, call, confirmations));
      const result: ChatMessage = { role: 'tool', toolCallId: call.id, content };
      input.turnMessages.push(result);
      await input.persist(result);
    }
    if (confirmations.length > 0) {
      return { kind: 'confirmation', pending: confirmations[0]!, text: response.text.trim() };
    }
    if (input.budget.tripped) return { kind: 'limit', reason: input.budget.tripped };
  }
}

async function handleToolCall(
  deps: LoopDeps,
  input: LoopInput,
  call: ToolCall,
  confirmations: PendingConfirmation[],
): Promise<string> {
  const allowed = new Set(input.tools.map((tool) => tool.name));
  if (!allowed.has(call.name)) {
    return `Unknown tool "${call.name}". Available tools: ${[...allowed].join(', ')}.`;
  }
  const snapshot = deps.skills();
  switch (call.name) {
    case 'get_skill': {
      const args = getSkillArgs.safeParse(call.arguments);
      if (!args.success) return describeArgumentErrors('get_skill', args.error);
      const result = getSkill(snapshot, args.data, input.unavailable ?? []);
      return result.status === 'ok' ? result.content : `Error: ${result.content}`;
    }
    case 'run': {
      const args = runArgs.safeParse(call.arguments);
      if (!args.success) return describeArgumentErrors('run', args.error);
      return runDirect(deps, input, args.data.command, confirmations);
    }
    case 'use_skill': {
      const args = useSkillArgs.safeParse(call.arguments);
      if (!args.success) return describeArgumentErrors('use_skill', args.error);
      return runDirect(
        deps,
        input,
        formatCommand(args.data.skill, flagsFromJson(args.data.arguments)),
        confirmations,
      );
    }
    case 'dispatch_agent':
      return dispatch(deps, input, call.arguments);
    case 'get_agent_results': {
      const args = getAgentResultsArgs.safeParse(call.arguments);
      if (!args.success) return describeArgumentErrors('get_agent_results', args.error);
      return collectResults(deps, input, args.data.agent_ids, confirmations);
    }
    case 'message_agent': {
      const args = messageAgentArgs.safeParse(call.arguments);
      if (!args.success) return describeArgumentErrors('message_agent', args.error);
      return messageAgent(deps, input, args.data.agent_id, args.data.message, confirmations);
    }
    default: {
      const command = directToolCommand(snapshot, call.name, call.arguments);
      if (command === null) return `Unknown tool "${call.name}".`;
      return runDirect(deps, input, command, confirmations);
    }
  }
}

async function runDirect(
  deps: LoopDeps,
  input: LoopInput,
  command: string,
  confirmations: PendingConfirmation[],
): Promise<string> {
  if (!(await input.budget.takeSkillCall())) return `Not run: ${input.budget.tripped}.`;
  const outcome = await deps.executor.execute({
    command,
    caller: { kind: 'orchestrator', allowMutating: input.mode !== 'multi_agent' },
    user: { id: input.turn.userId, timezone: input.turn.timezone },
    conversationId: input.turn.conversationId,
    channel: input.turn.channel,
    turnId: input.turn.turnId,
    originalRequest: input.turn.originalRequest,
    signal: input.signal,
  });
  emitSkillCall(deps.emit, outcome, command, null);
  if (outcome.metadata?.refused === 'sentinel') {
    confirmations.push({
      agentId: '',
      command,
      reasoning: String(outcome.metadata.reasoning ?? ''),
      skills: outcome.skill ? [outcome.skill] : [],
      mission: '',
    });
  }
  return resultForModel(outcome);
}

function dispatch(deps: LoopDeps, input: LoopInput, raw: Record<string, unknown>): string {
  const parsed = parseDispatchArgs(raw);
  if (!parsed.ok) return parsed.error;
  const snapshot = deps.skills();
  const knownSkill = (name: string) =>
    snapshot.skills.has(name) ||
    (name.endsWith('.*') && [...snapshot.skills.values()].some((skill) => `${skill.domain}.*` === name));
  const problems = validateDispatch(parsed.spec, input.board.specs, knownSkill);
  if (problems.length) return `Not dispatched: ${problems.join(' ')}`;
  if (!input.budget.takeAgent()) return `Not dispatched: ${input.budget.tripped}.`;
  input.board.specs.set(parsed.spec.agentId, parsed.spec);
  deps.emit({
    type: 'agent_dispatched',
    agentId: parsed.spec.agentId,
    mission: parsed.spec.mission,
    skills: parsed.spec.skills,
    dependsOn: parsed.spec.dependsOn,
  });
  return `Queued agent ${parsed.spec.agentId}. Dispatch any others, then call get_agent_results.`;
}

async function collectResults(
  deps: LoopDeps,
  input: LoopInput,
  agentIds: string[] | undefined,
  confirmations: PendingConfirmation[],
): Promise<string> {
  const { board } = input;
  const unknown = (agentIds ?? []).filter((id) => !board.specs.has(id));
  if (unknown.length) {
    const known = [...board.specs.keys()];
    return `Unknown agent id(s): ${unknown.join(', ')}. Dispatched this turn: ${known.join(', ') || 'none'}.`;
  }
  const pending = [...board.specs.values()].filter((spec) => !board.outcomes.has(spec.agentId));
  if (pending.length) {
    const done = new Map<string, AgentResult>(board.outcomes);
    await runDag({
      agents: pending,
      done,
      concurrency: input.limits.agent_concurrency,
      signal: input.signal,
      emit: (event) => {
        if (event.type === 'agent_start')
          deps.emit({ type: 'agent_start', agentId: event.agentId, wave: event.wave });
        else
          deps.emit({
            type: 'agent_end',
            agentId: event.agentId,
            status: event.result.status,
            result: event.result.result,
            ...(event.result.error ? { error: event.result.error } : {}),
          });
      },
      runAgent: async (spec, dependencyResults, signal) => {
        const outcome = await runSubAgent(deps, {
          spec,
          dependencyResults,
          turn: input.turn,
          budget: input.budget,
          defaultMaxToolCalls: input.limits.sub_agent_max_tool_calls,
          timeoutMs: input.limits.sub_agent_timeout_ms,
          signal,
        });
        board.outcomes.set(spec.agentId, outcome);
        if (outcome.confirmation) confirmations.push(outcome.confirmation);
        return outcome;
      },
    }).then(async (results) => {
      // Skipped agents never ran: record them so they are reported (to the model and in the
      // trace) and not run again.
      for (const [agentId, result] of results) {
        if (board.outcomes.has(agentId)) continue;
        board.outcomes.set(agentId, {
          ...result,
          executionId: '',
          transcript: [],
          usage: emptyUsage(),
          confirmation: null,
        });
        const spec = board.specs.get(agentId);
        if (!spec) continue;
        await recordSkippedAgent(
          deps.database,
          {
            id: crypto.randomUUID(),
            turnId: input.turn.turnId,
            userId: input.turn.userId,
            conversationId: input.turn.conversationId,
            agentId,
            mission: spec.mission,
            spec: { skills: spec.skills, context: spec.context ?? null, model: spec.model ?? null },
            dependsOn: spec.dependsOn,
          },
          { result: result.result, reason: result.skippedBecause ?? result.result },
        ).catch((error) => deps.logger.error({ err: error, agentId }, 'could not record a skipped agent'));
      }
    });
  }
  const wanted = agentIds?.length ? agentIds : [...board.specs.keys()];
  return formatAgentResults(
    wanted
      .map((id) => board.outcomes.get(id)!)
      .filter(Boolean)
      .map(plainResult),
  );
}

async function messageAgent(
  deps: LoopDeps,
  input: LoopInput,
  agentId: string,
  message: string,
  confirmations: PendingConfirmation[],
): Promise<string> {
  const spec = input.board.specs.get(agentId);
  const previous = input.board.outcomes.get(agentId);
  if (!spec || !previous) {
    return `Agent ${agentId} has not run in this turn. Dispatch it, call get_agent_results, then message it.`;
  }
  if (!previous.executionId) {
    // Say why it cannot go on, rather than "has not run" for an agent that did.
    if (previous.status === 'interrupted')
      return `Agent ${agentId} was interrupted (Steward restarted) and cannot be continued. Check what it did (its skill_calls in get_agent_results), then dispatch a new agent with a new agent_id.`;
    if (previous.status === 'skipped')
      return `Agent ${agentId} never ran: it was skipped (${previous.skippedBecause ?? previous.result}). Dispatch a new agent with a new agent_id.`;
    return `Agent ${agentId} finished before this turn and cannot be continued here. Dispatch a new agent with a new agent_id for the follow-up.`;
  }
  const outcome = await runSubAgent(deps, {
    spec,
    dependencyResults: [],
    turn: input.turn,
    budget: input.budget,
    defaultMaxToolCalls: input.limits.sub_agent_max_tool_calls,
    timeoutMs: input.limits.sub_agent_timeout_ms,
    signal: input.signal,
    followUp: { transcript: previous.transcript, message, executionId: previous.executionId },
  });
  input.board.outcomes.set(agentId, outcome);
  if (outcome.confirmation) confirmations.push(outcome.confirmation);
  return formatAgentResults([plainResult(outcome)]);
}
