import type { Database } from '../db/index.ts';
import { errorMessage } from '../errors.ts';
import type { ChatMessage, LlmClient, ToolDefinition, Usage } from '../llm/index.ts';
import { addUsage, emptyUsage, LlmError } from '../llm/index.ts';
import type { Logger } from '../logging/index.ts';
import type { SkillExecutor, SkillSnapshot } from '../skills/index.ts';
import { cutFenced, extractCommands, finishAgentRow, isGranted, startAgentRow } from '../skills/index.ts';
import type { AgentCall, AgentResult, AgentSpec } from './agent-types.ts';
import { type Emit, emitSkillCall } from './events.ts';
import { runArgs } from './orchestrator-tools.ts';
import { describeNow, subAgentBrief, subAgentSystemPrompt } from './prompts.ts';
import { resultForModel } from './result-for-model.ts';
import { describeArgumentErrors, toolFromZod, withArgumentsNote } from './tool-schema.ts';
import type { TurnBudget } from './turn-budget.ts';

export const SUB_AGENT_RUN_TOOL: ToolDefinition = toolFromZod(
  'run',
  'Run one of your skill commands and get its result.',
  runArgs,
);

/** The turn a sub-agent works in. */
export type TurnScope = {
  turnId: string;
  conversationId: string;
  userId: string;
  timezone: string;
  channel: string;
  originalRequest: string;
};

/** A call the sentinel refused: the turn asks the user before it may run. */
export type PendingConfirmation = {
  agentId: string;
  command: string;
  reasoning: string;
  skills: string[];
  mission: string;
};

export type SubAgentOutcome = AgentResult & {
  executionId: string;
  transcript: ChatMessage[];
  usage: Usage;
  confirmation: PendingConfirmation | null;
};

export type SubAgentDeps = {
  llm: LlmClient;
  executor: SkillExecutor;
  skills: () => SkillSnapshot;
  database: Database;
  logger: Logger;
  now: () => Date;
  emit: Emit;
};

export type SubAgentRequest = {
  spec: AgentSpec;
  dependencyResults: AgentResult[];
  turn: TurnScope;
  budget: TurnBudget;
  defaultMaxToolCalls: number;
  timeoutMs: number;
  signal: AbortSignal;
  /** For message_agent: the agent's earlier conversation and the follow-up. */
  followUp?: { transcript: ChatMessage[]; message: string; executionId: string };
};

const MAX_RESULT_IN_TRANSCRIPT = 4_000;

/**
 * One sub-agent: a short LLM loop over its granted skills through the `run` tool (or ```cmd
 * blocks in its text). Ends when the model answers without a command, at its tool-call
 * limit, on timeout, or on a sentinel refusal. Never throws: failures are its status.
 */
export async function runSubAgent(deps: SubAgentDeps, request: SubAgentRequest): Promise<SubAgentOutcome> {
  const { spec, turn } = request;
  const started = performance.now();
  const executionId = request.followUp?.executionId ?? crypto.randomUUID();
  const maxToolCalls = spec.maxToolCalls ?? request.defaultMaxToolCalls;
  const timeout = AbortSignal.timeout(request.timeoutMs);
  const signal = AbortSignal.any([request.signal, timeout]);
  let usage = emptyUsage();
  let toolCallsUsed = 0;
  let confirmation: PendingConfirmation | null = null;
  const results: string[] = [];
  const calls: AgentCall[] = [];

  const messages: ChatMessage[] = request.followUp
    ? [...request.followUp.transcript, { role: 'user', content: request.followUp.message }]
    : initialMessages(deps, request);

  if (!request.followUp) await insertAgentRow(deps.database, executionId, request);

  const finish = async (
    status: AgentResult['status'],
    result: string,
    error?: string,
  ): Promise<SubAgentOutcome> => {
    const outcome: SubAgentOutcome = {
      agentId: spec.agentId,
      status,
      result,
      ...(error ? { error } : {}),
      toolCallsUsed,
      durationMs: Math.round(performance.now() - started),
      ...(calls.length ? { calls } : {}),
      executionId,
      transcript: messages,
      usage,
      confirmation,
    };
    await recordAgentEnd(deps.database, outcome).catch((failure) =>
      deps.logger.error({ err: failure }, 'could not record a sub-agent'),
    );
    return outcome;
  };

  try {
    for (;;) {
      const response = await deps.llm.chat({
        role: 'sub_agent',
        model: spec.model,
        messages,
        tools: [SUB_AGENT_RUN_TOOL],
        sessionId: turn.conversationId,
        signal,
        context: {
          turnId: turn.turnId,
          executionId,
          conversationId: turn.conversationId,
          userId: turn.userId,
        },
      });
      usage = addUsage(usage, response.usage);
      deps.emit({
        type: 'llm_call',
        role: 'sub_agent',
        model: response.model,
        usage: response.usage,
        latencyMs: response.latencyMs,
        agentId: spec.agentId,
      });
      const fromText = response.toolCalls.length === 0 ? extractCommands(response.text) : [];
      if (response.toolCalls.length === 0 && fromText.length === 0) {
        messages.push({ role: 'assistant', content: response.text });
        return await finish('completed', response.text.trim() || summarize(results));
      }
      messages.push({
        role: 'assistant',
        content: response.text || null,
        ...(response.toolCalls.length ? { toolCalls: response.toolCalls } : {}),
      });

      const textResults: string[] = [];
      for (const call of response.toolCalls) {
        const content =
          call.argumentsError ??
          withArgumentsNote(call.argumentsNote, await runToolCall(call.name, call.arguments));
        messages.push({ role: 'tool', toolCallId: call.id, content });
      }
      for (const command of fromText) textResults.push(`$ ${command}\n${await runCommand(command)}`);
      if (textResults.length)
        messages.push({ role: 'user', content: `Command results:\n\n${textResults.join('\n\n')}` });

      if (confirmation) {
        const pending = confirmation as PendingConfirmation;
        return await finish(
          'failed',
          `${summarize(results)}\nStopped before running ${pending.command}: it needs the user's confirmation (${pending.reasoning}).`.trim(),
          'needs_confirmation',
        );
      }
      if (toolCallsUsed >= maxToolCalls && !signal.aborted) {
        return await finish(
          'failed',
          `Stopped at the limit of ${maxToolCalls} tool calls before finishing. Done so far:\n${summarize(results)}`,
          'tool_call_limit',
        );
      }
      if (request.budget.tripped) {
        return await finish(
          'failed',
          `Stopped: ${request.budget.tripped}. Done so far:\n${summarize(results)}`,
          'turn_limit',
        );
      }
    }
  } catch (error) {
    if (timeout.aborted) {
      return finish(
        'timeout',
        `Timed out after ${request.timeoutMs} ms. Done so far:\n${summarize(results)}`,
        'timeout',
      );
    }
    if (request.signal.aborted)
      return finish(
        'failed',
        `Cancelled before it finished. Done so far:\n${summarize(results)}`,
        'cancelled',
      );
    const message = error instanceof LlmError ? `${error.errorClass}: ${error.message}` : errorMessage(error);
    if (!(error instanceof LlmError))
      deps.logger.error({ err: error, agentId: spec.agentId }, 'sub-agent crashed');
    return finish('failed', `Could not finish: ${message}. Done so far:\n${summarize(results)}`, message);
  }

  async function runToolCall(name: string, args: Record<string, unknown>): Promise<string> {
    if (name !== 'run')
      return `Unknown tool "${name}". You have one tool: run {"command": "<skill command>"}.`;
    const parsed = runArgs.safeParse(args);
    if (!parsed.success) return describeArgumentErrors('run', parsed.error);
    return runCommand(parsed.data.command);
  }

  async function runCommand(command: string): Promise<string> {
    if (confirmation) return 'Not run: an earlier command is waiting for the user’s confirmation.';
    if (toolCallsUsed >= maxToolCalls)
      return `Not run: you reached your limit of ${maxToolCalls} tool calls.`;
    if (!(await request.budget.takeSkillCall())) return `Not run: ${request.budget.tripped}.`;
    toolCallsUsed++;
    const outcome = await deps.executor.execute({
      command,
      caller: {
        kind: 'agent',
        agentId: spec.agentId,
        grantedSkills: spec.skills,
        mission: spec.mission,
        parentExecutionId: executionId,
      },
      user: { id: turn.userId, timezone: turn.timezone },
      conversationId: turn.conversationId,
      channel: turn.channel,
      turnId: turn.turnId,
      originalRequest: turn.originalRequest,
      signal,
    });
    emitSkillCall(deps.emit, outcome, command, spec.agentId);
    if (outcome.metadata?.refused === 'sentinel') {
      confirmation = {
        agentId: spec.agentId,
        command,
        reasoning: String(outcome.metadata.reasoning ?? ''),
        skills: spec.skills,
        mission: spec.mission,
      };
    }
    calls.push({ command, skill: outcome.skill, status: outcome.callStatus, mutating: outcome.effect });
    const status = outcome.callStatus === 'unknown' ? 'unknown' : outcome.status;
    results.push(`${command} → ${status}: ${firstLines(outcome.content)}`);
    const cutBefore = typeof outcome.metadata?.truncated === 'number' ? outcome.metadata.truncated : 0;
    return resultForModel({ ...outcome, content: shortened(outcome.content, cutBefore) });
  }
}

function initialMessages(deps: SubAgentDeps, request: SubAgentRequest): ChatMessage[] {
  const snapshot = deps.skills();
  const granted = [...snapshot.skills.values()]
    .filter((skill) => isGranted(skill.name, request.spec.skills))
    .map((skill) => ({ name: skill.name, usage: skill.usage, description: skill.description }));
  const system = subAgentSystemPrompt(granted);
  const brief = subAgentBrief({
    mission: request.spec.mission,
    context: request.spec.context,
    dependencyResults: request.dependencyResults.map((result) => ({
      agentId: result.agentId,
      status: result.status,
      result: result.result,
    })),
    now: describeNow(deps.now(), request.turn.timezone),
  });
  return [
    { role: 'system', content: [{ type: 'text', text: system, cache_control: { type: 'ephemeral' } }] },
    { role: 'user', content: brief },
  ];
}

/**
 * A result cut to what a sub-agent's transcript holds, saying that it was cut and how much
 * (`cutBefore`: characters the executor had already cut).
 */
export function shortened(content: string, cutBefore = 0, max = MAX_RESULT_IN_TRANSCRIPT): string {
  if (content.length <= max) return content;
  const hidden = content.length - max + cutBefore;
  return cutFenced(
    content,
    max,
    `\n…[truncated: about ${hidden} more characters not shown. Narrow the command (filters, --limit) to see the rest.]`,
  );
}

function firstLines(text: string, max = 300): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

function summarize(results: string[]): string {
  return results.length ? results.map((line) => `- ${line}`).join('\n') : '(no skill calls)';
}

async function insertAgentRow(
  database: Database,
  executionId: string,
  request: SubAgentRequest,
): Promise<void> {
  await startAgentRow(database, {
    id: executionId,
    turnId: request.turn.turnId,
    userId: request.turn.userId,
    conversationId: request.turn.conversationId,
    agentId: request.spec.agentId,
    mission: request.spec.mission,
    spec: {
      skills: request.spec.skills,
      context: request.spec.context ?? null,
      model: request.spec.model ?? null,
    },
    dependsOn: request.spec.dependsOn,
  });
}

async function recordAgentEnd(database: Database, outcome: SubAgentOutcome): Promise<void> {
  await finishAgentRow(database, outcome.executionId, {
    status: outcome.status,
    result: outcome.result,
    error: outcome.error ?? null,
    transcript: outcome.transcript,
    usage: { ...outcome.usage, toolCallsUsed: outcome.toolCallsUsed },
    durationMs: outcome.durationMs,
  });
}
