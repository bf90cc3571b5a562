import { errorMessage, StewardError } from '../errors.ts';
import { fenceExternal } from '../skills/index.ts';
import type { AgentEvent, AgentResult, AgentSpec } from './agent-types.ts';
import { findCycle } from './dispatch-validation.ts';

/**
 * Runs one sub-agent to the end. `dependencyResults` are the results of `spec.dependsOn`, in that
 * order, all `completed`. Should report failures and timeouts as results; a throw is recorded as
 * `failed`. Must honour `signal`: runDag waits for every agent it started.
 */
export type RunAgent = (
  spec: AgentSpec,
  dependencyResults: AgentResult[],
  signal: AbortSignal,
) => Promise<AgentResult>;

export type RunDagOptions = {
  /** Agents to run now. */
  agents: AgentSpec[];
  /** Results of agents finished earlier in the turn, which dependencies may refer to. */
  done?: ReadonlyMap<string, AgentResult>;
  runAgent: RunAgent;
  /** Most agents running at once (at least 1). */
  concurrency: number;
  /** Aborting skips agents not started yet and is passed on to running ones. */
  signal?: AbortSignal;
  /** Called synchronously for every start, end and skip. Must not throw. */
  emit?: (event: AgentEvent) => void;
  now?: () => number;
};

/**
 * Runs `agents` as a dependency graph: every agent whose dependencies all completed starts as soon
 * as a slot is free. A failed, timed-out or skipped agent never blocks the rest of the graph; its
 * transitive dependents are `skipped` and the reason names the agent at the root. Resolves with a
 * result for every agent in `agents`, in completion order. Rejects only on caller bugs.
 */
export async function runDag(options: RunDagOptions): Promise<Map<string, AgentResult>> {
  const { runAgent, emit = () => {}, now = Date.now } = options;
  const done = options.done ?? new Map<string, AgentResult>();
  const concurrency = Math.floor(options.concurrency);
  if (!(concurrency >= 1)) {
    throw new StewardError(
      'dag_invalid_concurrency',
      `concurrency must be at least 1, got ${options.concurrency}`,
    );
  }
  const pending = new Map<string, AgentSpec>();
  const dependents = new Map<string, AgentSpec[]>();
  for (const spec of options.agents) {
    if (pending.has(spec.agentId)) {
      throw new StewardError('dag_duplicate_agent', `agent "${spec.agentId}" is listed twice`);
    }
    pending.set(spec.agentId, spec);
    for (const dependency of new Set(spec.dependsOn)) {
      dependents.set(dependency, [...(dependents.get(dependency) ?? []), spec]);
    }
  }

  const signal = options.signal ?? new AbortController().signal;
  const results = new Map<string, AgentResult>();
  const waves = new Map<string, number>();
  const ready: AgentSpec[] = [];
  const running = new Set<string>();
  const finished = Promise.withResolvers<Map<string, AgentResult>>();

  /** A dependency's result: this run's result for a pending agent, else the earlier one. */
  const resultOf = (id: string): AgentResult | undefined =>
    pending.has(id) ? results.get(id) : done.get(id);

  function settle(spec: AgentSpec, result: AgentResult): void {
    results.set(spec.agentId, result);
    emit(
      result.status === 'skipped'
        ? { type: 'agent_skipped', agentId: spec.agentId, result }
        : { type: 'agent_end', agentId: spec.agentId, result },
    );
    for (const dependent of dependents.get(spec.agentId) ?? []) consider(dependent);
  }

  function skip(spec: AgentSpec, reason: string): void {
    settle(spec, {
      agentId: spec.agentId,
      status: 'skipped',
      result: `Skipped: ${reason}.`,
      toolCallsUsed: 0,
      durationMs: 0,
      skippedBecause: reason,
    });
  }

  /** Queues `spec` once its dependencies completed, or skips it once one of them cannot. */
  function consider(spec: AgentSpec): void {
    if (results.has(spec.agentId) || running.has(spec.agentId) || waves.has(spec.agentId)) return;
    const blocked = signal.aborted ? 'turn cancelled' : blockedReason(spec);
    if (blocked) {
      skip(spec, blocked);
      return;
    }
    if (!spec.dependsOn.every((dependency) => resultOf(dependency))) return;
    const dependencyWaves = spec.dependsOn.map((dependency) => waves.get(dependency) ?? 0);
    waves.set(spec.agentId, 1 + Math.max(0, ...dependencyWaves));
    ready.push(spec);
  }

  /** Why `spec` can never run, or null while it can (now or once its dependencies finish). */
  function blockedReason(spec: AgentSpec): string | null {
    for (const dependency of spec.dependsOn) {
      if (!pending.has(dependency) && !done.has(dependency))
        return `dependency "${dependency}" was never dispatched`;
      const result = resultOf(dependency);
      if (result && result.status !== 'completed') return blockedBy(result);
    }
    return null;
  }

  function startReady(): void {
    while (running.size < concurrency && ready.length > 0) start(ready.shift()!);
    if (running.size === 0 && ready.length === 0) finish();
  }

  function start(spec: AgentSpec): void {
    running.add(spec.agentId);
    emit({ type: 'agent_start', agentId: spec.agentId, wave: waves.get(spec.agentId)! });
    const dependencyResults = spec.dependsOn.map((dependency) => resultOf(dependency)!);
    runSafely(spec, dependencyResults)
      .then((result) => {
        running.delete(spec.agentId);
        settle(spec, result);
        startReady();
      })
      .catch(finished.reject);
  }

  async function runSafely(spec: AgentSpec, dependencyResults: AgentResult[]): Promise<AgentResult> {
    const startedAt = now();
    try {
      const result = await runAgent(spec, dependencyResults, signal);
      return { ...result, agentId: spec.agentId };
    } catch (error) {
      return {
        agentId: spec.agentId,
        status: 'failed',
        result: '',
        error: errorMessage(error),
        toolCallsUsed: 0,
        durationMs: now() - startedAt,
      };
    }
  }

  function finish(): void {
    // Only agents on (or behind) a dependency cycle can be left; validation should prevent that.
    const stuck = [...pending.values()].filter((spec) => !results.has(spec.agentId));
    if (stuck.length > 0) {
      const cycle = findCycle(new Map(stuck.map((spec) => [spec.agentId, spec])));
      const reason = cycle ? `dependency cycle ${cycle.join(' → ')}` : 'its dependencies never finished';
      for (const spec of stuck) if (!results.has(spec.agentId)) skip(spec, reason);
    }
    finished.resolve(results);
  }

  function cancel(): void {
    ready.length = 0;
    for (const spec of pending.values()) {
      if (!results.has(spec.agentId) && !running.has(spec.agentId)) skip(spec, 'turn cancelled');
    }
  }

  signal.addEventListener('abort', cancel, { once: true });
  try {
    for (const spec of pending.values()) consider(spec);
    startReady();
    return await finished.promise;
  } finally {
    signal.removeEventListener('abort', cancel);
  }
}

/** Why the dependents of a failed, timed-out or skipped agent cannot run, naming the root agent. */
function blockedBy(result: AgentResult): string {
  const detail = result.error ?? result.result;
  switch (result.status) {
    case 'failed':
      return `dependency "${result.agentId}" failed${detail ? `: ${detail}` : ''}`;
    case 'timeout':
      return `dependency "${result.agentId}" timed out${detail ? `: ${detail}` : ''}`;
    case 'interrupted':
      return `dependency "${result.agentId}" was interrupted (Steward restarted) before it finished`;
    default:
      return result.skippedBecause ?? `dependency "${result.agentId}" was skipped`;
  }
}

/** What the model is told beside a call whose outcome is unknown. */
export const MAY_HAVE_HAPPENED = 'may have happened — check before redoing';

/**
 * The `get_agent_results` tool result: `{agents: [...]}` as JSON, sorted by agent id. Each agent
 * comes with the skill calls it made as Steward recorded them (not as the agent tells it), a
 * mutating call of unknown outcome marked as such. An interrupted agent's result is Steward's own
 * account (its commands fenced as the agent's words), not the agent's.
 */
export function formatAgentResults(results: AgentResult[]): string {
  const sorted = [...results].sort((a, b) => (a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : 0));
  const agents = sorted.map((result) => ({
    agent_id: result.agentId,
    status: result.status,
    // What a sub-agent reports is data: it may quote what its skills read.
    result:
      result.result && result.status !== 'skipped' && result.status !== 'interrupted'
        ? fenceExternal(`agent:${result.agentId}`, result.result)
        : result.result,
    ...(result.error !== undefined && { error: result.error }),
    ...(result.skippedBecause !== undefined && { skipped_because: result.skippedBecause }),
    ...(result.calls?.length && {
      skill_calls: result.calls.map((call) => ({
        skill: call.skill,
        status: call.status,
        ...(call.status === 'unknown' && call.mutating && { note: MAY_HAVE_HAPPENED }),
      })),
    }),
    tool_calls_used: result.toolCallsUsed,
    duration_ms: result.durationMs,
  }));
  return JSON.stringify({ agents });
}
