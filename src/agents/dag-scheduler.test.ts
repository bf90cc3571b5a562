import { describe, expect, it } from 'vitest';
import type { AgentEvent, AgentResult, AgentSpec } from './agent-types.ts';
import { formatAgentResults, type RunAgent, runDag } from './dag-scheduler.ts';

function spec(agentId: string, dependsOn: string[] = []): AgentSpec {
  return { agentId, mission: `Do the ${agentId} work.`, skills: ['tasks.search'], dependsOn };
}

function completed(agentId: string, result = `${agentId} done`): AgentResult {
  return { agentId, status: 'completed', result, toolCallsUsed: 1, durationMs: 10 };
}

/** Lets every pending promise callback run, so the scheduler reacts to what a test just did. */
function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

type Call = {
  spec: AgentSpec;
  dependencyResults: AgentResult[];
  signal: AbortSignal;
  finish: (result?: Partial<AgentResult>) => void;
  throwError: (error: unknown) => void;
};

/**
 * A runAgent whose agents only finish when the test says so. Records `start x` / `end x` in the
 * order they happen, and the most agents it ever had running at once.
 */
function controlledAgents() {
  const log: string[] = [];
  const calls = new Map<string, Call>();
  let runningNow = 0;
  let maxRunning = 0;
  const runAgent: RunAgent = (spec, dependencyResults, signal) => {
    log.push(`start ${spec.agentId}`);
    runningNow += 1;
    maxRunning = Math.max(maxRunning, runningNow);
    const deferred = Promise.withResolvers<AgentResult>();
    const end = () => {
      log.push(`end ${spec.agentId}`);
      runningNow -= 1;
    };
    calls.set(spec.agentId, {
      spec,
      dependencyResults,
      signal,
      finish: (result = {}) => {
        end();
        deferred.resolve({ ...completed(spec.agentId), ...result });
      },
      throwError: (error) => {
        end();
        deferred.reject(error);
      },
    });
    return deferred.promise;
  };
  const call = (agentId: string): Call => {
    const found = calls.get(agentId);
    if (!found) throw new Error(`${agentId} was never started; started: ${[...calls.keys()].join(', ')}`);
    return found;
  };
  return { runAgent, log, call, started: () => [...calls.keys()], maxRunning: () => maxRunning };
}

function eventLog() {
  const events: AgentEvent[] = [];
  return { events, emit: (event: AgentEvent) => events.push(event) };
}

describe('runDag', () => {
  it('runs a single agent and reports its start and end', async () => {
    const agents = controlledAgents();
    const { events, emit } = eventLog();
    const run = runDag({ agents: [spec('solo')], runAgent: agents.runAgent, concurrency: 4, emit });
    agents.call('solo').finish({ result: 'all good' });
    const results = await run;
    expect([...results.values()]).toEqual([{ ...completed('solo'), result: 'all good' }]);
    expect(agents.call('solo').dependencyResults).toEqual([]);
    expect(events).toEqual([
      { type: 'agent_start', agentId: 'solo', wave: 1 },
      { type: 'agent_end', agentId: 'solo', result: { ...completed('solo'), result: 'all good' } },
    ]);
  });

  it('starts independent agents together and lists results in completion order', async () => {
    const agents = controlledAgents();
    const run = runDag({ agents: [spec('a'), spec('b')], runAgent: agents.runAgent, concurrency: 4 });
    expect(agents.log).toEqual(['start a', 'start b']);
    agents.call('b').finish();
    await flush();
    agents.call('a').finish();
    const results = await run;
    expect(agents.log).toEqual(['start a', 'start b', 'end b', 'end a']);
    expect([...results.keys()]).toEqual(['b', 'a']);
  });

  it('runs a chain one after another, handing each agent its direct dependency result', async () => {
    const agents = controlledAgents();
    const { events, emit } = eventLog();
    const run = runDag({
      agents: [spec('c', ['b']), spec('b', ['a']), spec('a')],
      runAgent: agents.runAgent,
      concurrency: 4,
      emit,
    });
    expect(agents.started()).toEqual(['a']);
    agents.call('a').finish({ result: 'found 3 tasks' });
    await flush();
    expect(agents.started()).toEqual(['a', 'b']);
    expect(agents.call('b').dependencyResults).toEqual([{ ...completed('a'), result: 'found 3 tasks' }]);
    agents.call('b').finish({ result: 'emailed bob' });
    await flush();
    expect(agents.call('c').dependencyResults).toEqual([{ ...completed('b'), result: 'emailed bob' }]);
    agents.call('c').finish();
    const results = await run;
    expect([...results.keys()]).toEqual(['a', 'b', 'c']);
    expect(agents.log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    const waves = events.flatMap((event) =>
      event.type === 'agent_start' ? [[event.agentId, event.wave]] : [],
    );
    expect(waves).toEqual([
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ]);
  });

  it('runs the two middle agents of a diamond together and hands the last one both results in depends_on order', async () => {
    const agents = controlledAgents();
    const { events, emit } = eventLog();
    const run = runDag({
      agents: [spec('a'), spec('b', ['a']), spec('c', ['a']), spec('d', ['b', 'c'])],
      runAgent: agents.runAgent,
      concurrency: 4,
      emit,
    });
    agents.call('a').finish();
    await flush();
    expect(agents.started()).toEqual(['a', 'b', 'c']);
    agents.call('c').finish({ result: 'c first' });
    await flush();
    expect(agents.started()).not.toContain('d');
    agents.call('b').finish({ result: 'b second' });
    await flush();
    expect(agents.call('d').dependencyResults.map((result) => result.result)).toEqual([
      'b second',
      'c first',
    ]);
    agents.call('d').finish();
    await run;
    expect(agents.log).toEqual([
      'start a',
      'end a',
      'start b',
      'start c',
      'end c',
      'end b',
      'start d',
      'end d',
    ]);
    expect(events).toContainEqual({ type: 'agent_start', agentId: 'd', wave: 3 });
  });

  it('skips every transitive dependent of a failed agent while an independent branch completes', async () => {
    const agents = controlledAgents();
    const { events, emit } = eventLog();
    const run = runDag({
      agents: [spec('fetch'), spec('summarize', ['fetch']), spec('send', ['summarize']), spec('weather')],
      runAgent: agents.runAgent,
      concurrency: 4,
      emit,
    });
    agents.call('fetch').finish({ status: 'failed', result: '', error: 'Gmail is unavailable' });
    await flush();
    agents.call('weather').finish();
    const results = await run;

    expect(agents.started()).toEqual(['fetch', 'weather']);
    expect(results.get('weather')?.status).toBe('completed');
    for (const id of ['summarize', 'send']) {
      expect(results.get(id)).toMatchObject({
        status: 'skipped',
        toolCallsUsed: 0,
        skippedBecause: 'dependency "fetch" failed: Gmail is unavailable',
      });
    }
    expect(events.filter((event) => event.type === 'agent_skipped').map((event) => event.agentId)).toEqual([
      'summarize',
      'send',
    ]);
  });

  it('names a timed-out dependency in the skip reason', async () => {
    const agents = controlledAgents();
    const run = runDag({
      agents: [spec('slow'), spec('after', ['slow'])],
      runAgent: agents.runAgent,
      concurrency: 2,
    });
    agents.call('slow').finish({ status: 'timeout', result: '', error: 'no answer within 120 s' });
    const results = await run;
    expect(results.get('after')?.skippedBecause).toBe('dependency "slow" timed out: no answer within 120 s');
  });

  it('records a throwing runAgent as failed and carries on', async () => {
    const agents = controlledAgents();
    const run = runDag({
      agents: [spec('crash'), spec('after', ['crash'])],
      runAgent: agents.runAgent,
      concurrency: 2,
    });
    agents.call('crash').throwError(new Error('socket hang up'));
    const results = await run;
    expect(results.get('crash')).toMatchObject({
      status: 'failed',
      error: 'socket hang up',
      toolCallsUsed: 0,
    });
    expect(results.get('after')).toMatchObject({
      status: 'skipped',
      skippedBecause: 'dependency "crash" failed: socket hang up',
    });
  });

  it('records a runAgent that throws before returning a promise as failed', async () => {
    const runAgent: RunAgent = () => {
      throw new Error('bad spec');
    };
    const results = await runDag({ agents: [spec('a')], runAgent, concurrency: 1 });
    expect(results.get('a')).toMatchObject({ status: 'failed', error: 'bad spec' });
  });

  it('never runs more agents at once than the concurrency, and starts the next as soon as a slot frees', async () => {
    const agents = controlledAgents();
    const ids = ['a', 'b', 'c', 'd', 'e'];
    const run = runDag({ agents: ids.map((id) => spec(id)), runAgent: agents.runAgent, concurrency: 2 });
    expect(agents.started()).toEqual(['a', 'b']);
    agents.call('b').finish();
    await flush();
    expect(agents.started()).toEqual(['a', 'b', 'c']);
    for (const id of ['a', 'c', 'd', 'e']) {
      agents.call(id).finish();
      await flush();
    }
    const results = await run;
    expect(agents.maxRunning()).toBe(2);
    expect([...results.keys()]).toEqual(['b', 'a', 'c', 'd', 'e']);
  });

  it('lets results from an earlier call satisfy or block dependencies', async () => {
    const agents = controlledAgents();
    const { events, emit } = eventLog();
    const done = new Map<string, AgentResult>([
      ['search', completed('search', 'earlier search')],
      [
        'broken',
        { agentId: 'broken', status: 'failed', result: '', error: 'quota', toolCallsUsed: 2, durationMs: 5 },
      ],
    ]);
    const run = runDag({
      agents: [spec('report', ['search']), spec('retry', ['search', 'broken'])],
      done,
      runAgent: agents.runAgent,
      concurrency: 2,
      emit,
    });
    expect(agents.call('report').dependencyResults).toEqual([completed('search', 'earlier search')]);
    agents.call('report').finish();
    const results = await run;
    expect([...results.keys()].sort()).toEqual(['report', 'retry']);
    expect(results.get('retry')?.skippedBecause).toBe('dependency "broken" failed: quota');
    expect(events).toContainEqual({ type: 'agent_start', agentId: 'report', wave: 1 });
  });

  it('skips an agent whose dependency was never dispatched', async () => {
    const agents = controlledAgents();
    const results = await runDag({
      agents: [spec('orphan', ['ghost'])],
      runAgent: agents.runAgent,
      concurrency: 1,
    });
    expect(agents.started()).toEqual([]);
    expect(results.get('orphan')?.skippedBecause).toBe('dependency "ghost" was never dispatched');
  });

  it('skips agents caught in a dependency cycle instead of hanging', async () => {
    const agents = controlledAgents();
    const run = runDag({
      agents: [spec('free'), spec('x', ['y']), spec('y', ['x']), spec('z', ['y'])],
      runAgent: agents.runAgent,
      concurrency: 2,
    });
    agents.call('free').finish();
    const results = await run;
    expect(agents.started()).toEqual(['free']);
    expect(results.get('x')?.skippedBecause).toBe('dependency cycle x → y → x');
    expect(results.get('z')?.status).toBe('skipped');
  });

  it('on abort skips agents not started, signals running ones and waits for them', async () => {
    const agents = controlledAgents();
    const controller = new AbortController();
    const { events, emit } = eventLog();
    const run = runDag({
      agents: [spec('a'), spec('b'), spec('after_a', ['a'])],
      runAgent: agents.runAgent,
      concurrency: 1,
      signal: controller.signal,
      emit,
    });
    expect(agents.started()).toEqual(['a']);
    controller.abort();
    expect(agents.call('a').signal.aborted).toBe(true);
    let settled = false;
    void run.then(() => {
      settled = true;
    });
    await flush();
    expect(settled).toBe(false);
    agents.call('a').finish({ status: 'failed', result: '', error: 'aborted' });
    const results = await run;
    expect(agents.started()).toEqual(['a']);
    expect(results.get('b')).toMatchObject({ status: 'skipped', skippedBecause: 'turn cancelled' });
    expect(results.get('after_a')).toMatchObject({ status: 'skipped', skippedBecause: 'turn cancelled' });
    expect(results.get('a')?.status).toBe('failed');
    expect(events.filter((event) => event.type === 'agent_skipped')).toHaveLength(2);
  });

  it('runs nothing when the signal is already aborted', async () => {
    const agents = controlledAgents();
    const results = await runDag({
      agents: [spec('a'), spec('b', ['a'])],
      runAgent: agents.runAgent,
      concurrency: 2,
      signal: AbortSignal.abort(),
    });
    expect(agents.started()).toEqual([]);
    expect([...results.values()].map((result) => result.skippedBecause)).toEqual([
      'turn cancelled',
      'turn cancelled',
    ]);
  });

  it('returns an empty map for no agents and rejects caller bugs', async () => {
    const agents = controlledAgents();
    expect((await runDag({ agents: [], runAgent: agents.runAgent, concurrency: 1 })).size).toBe(0);
    await expect(
      runDag({ agents: [spec('a')], runAgent: agents.runAgent, concurrency: 0 }),
    ).rejects.toMatchObject({
      code: 'dag_invalid_concurrency',
    });
    await expect(
      runDag({ agents: [spec('a'), spec('a')], runAgent: agents.runAgent, concurrency: 1 }),
    ).rejects.toMatchObject({ code: 'dag_duplicate_agent' });
  });
});

describe('formatAgentResults', () => {
  it('renders the get_agent_results shape sorted by agent id, with error and skip reason only when set', () => {
    const text = formatAgentResults([
      {
        agentId: 'send',
        status: 'skipped',
        result: 'Skipped.',
        toolCallsUsed: 0,
        durationMs: 0,
        skippedBecause: 'x',
      },
      completed('fetch'),
      { agentId: 'calendar', status: 'failed', result: '', error: 'quota', toolCallsUsed: 2, durationMs: 40 },
    ]);
    expect(JSON.parse(text)).toEqual({
      agents: [
        {
          agent_id: 'calendar',
          status: 'failed',
          result: '',
          error: 'quota',
          tool_calls_used: 2,
          duration_ms: 40,
        },
        {
          agent_id: 'fetch',
          status: 'completed',
          result: '<external source="agent:fetch">\nfetch done\n</external>',
          tool_calls_used: 1,
          duration_ms: 10,
        },
        {
          agent_id: 'send',
          status: 'skipped',
          result: 'Skipped.',
          skipped_because: 'x',
          tool_calls_used: 0,
          duration_ms: 0,
        },
      ],
    });
  });
});
