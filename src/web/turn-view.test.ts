import { expect, it } from 'vitest';
import type { TurnTrace } from '../agents/index.ts';
import { turnBody } from './turn-view.ts';

it('shows an interrupted agent as interrupted (its node counts as failed for the wave view)', async () => {
  const agent = (agentId: string, status: string) => ({
    id: `row-${agentId}`,
    agent_id: agentId,
    mission: `mission of ${agentId}`,
    depends_on: [],
    status,
    result: null,
    error: status === 'interrupted' ? 'interrupted by a restart' : null,
    usage: null,
    started_at: new Date('2026-11-22T10:00:00Z'),
    finished_at: null,
    duration_ms: null,
    skill_calls: [],
  });
  const trace = {
    turn: {
      id: 't1',
      conversation_id: 'c1',
      user_id: 'local',
      status: 'completed',
      mode: 'multi_agent',
      request: 'Create the task',
      reply: 'It was interrupted.',
      started_at: new Date('2026-11-22T10:00:00Z'),
      finished_at: null,
      stop_reason: 'reply',
      error: null,
      receipts: [],
    },
    orchestrator_calls: [],
    llm_calls: [],
    agents: [agent('slow', 'interrupted'), agent('quick', 'completed')],
    direct_skill_calls: [],
    sentinel_decisions: [],
    usage: { prompt_tokens: 0, cached_tokens: 0, cache_write_tokens: 0, completion_tokens: 0, cost: 0 },
  } as unknown as TurnTrace;
  const page = String(await turnBody(trace));
  expect(page).toMatch(
    /data-agent-id="slow" data-depends-on="" data-status="failed"[^>]*>\s*<header><strong>slow<\/strong> <span class="badge" data-field="status">interrupted<\/span>/,
  );
  expect(page).toMatch(/data-agent-id="quick"[^>]*data-status="done"[\s\S]*?data-field="status">done</);
});
