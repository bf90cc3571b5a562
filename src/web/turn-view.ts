import { html } from 'hono/html';
import type { TurnTrace } from '../agents/index.ts';
import { formatCost, formatDate } from './layout.ts';
import { markdown } from './markdown.ts';
import { commandText } from './skill-help.ts';

/** The contract's agent statuses, from the stored ones. */
export function agentStatus(stored: string): 'pending' | 'running' | 'done' | 'failed' | 'skipped' {
  if (stored === 'running') return 'running';
  if (stored === 'completed') return 'done';
  if (stored === 'skipped') return 'skipped';
  if (stored === 'failed' || stored === 'timeout' || stored === 'interrupted') return 'failed';
  return 'pending';
}

type Agent = TurnTrace['agents'][number];

/** Waves: an agent runs one wave after the latest of its dependencies. */
export function waves(
  agents: ReadonlyArray<{ agent_id: string | null; depends_on: string[] | null }>,
): Map<string, number> {
  const byId = new Map(agents.map((agent) => [agent.agent_id ?? '', agent]));
  const wave = new Map<string, number>();
  const visit = (id: string, seen: Set<string>): number => {
    const known = wave.get(id);
    if (known !== undefined) return known;
    if (seen.has(id)) return 0;
    seen.add(id);
    const agent = byId.get(id);
    const depth =
      Math.max(
        -1,
        ...(agent?.depends_on ?? []).filter((dep) => byId.has(dep)).map((dep) => visit(dep, seen)),
      ) + 1;
    wave.set(id, depth);
    return depth;
  };
  for (const agent of agents) visit(agent.agent_id ?? '', new Set());
  return wave;
}

const truncate = (text: string | null | undefined, max: number) =>
  !text ? '' : text.length > max ? `${text.slice(0, max)}…` : text;

function agentNode(agent: Agent) {
  const status = agentStatus(agent.status);
  const deps = agent.depends_on ?? [];
  return html`<article class="agent status-${status}" data-agent-id="${agent.agent_id ?? ''}" data-depends-on="${deps.join(' ')}" data-status="${status}" tabindex="0">
    <header><strong>${agent.agent_id}</strong> <span class="badge" data-field="status">${agent.status === 'interrupted' ? 'interrupted' : status}</span></header>
    <p class="mission">${truncate(agent.mission, 300)}</p>
    ${deps.length ? html`<p class="deps">after ${deps.join(', ')}</p>` : ''}
    <p class="meta" data-field="duration">${agent.duration_ms !== null && agent.duration_ms !== undefined ? `${agent.duration_ms} ms` : ''}</p>
    <ul class="calls" data-field="calls">${agent.skill_calls.map((call) => html`<li class="call-${call.status}" data-execution-id="${call.id}"><code class="command">${commandText(truncate(call.command, 200))}</code> ${call.status}</li>`)}</ul>
    ${agent.error ? html`<p class="error">${truncate(agent.error, 500)}</p>` : ''}
  </article>`;
}

export function turnBody(trace: TurnTrace) {
  const { turn } = trace;
  const byWave = waves(trace.agents);
  const count = Math.max(0, ...byWave.values()) + 1;
  const columns = Array.from({ length: trace.agents.length ? count : 0 }, (_, index) =>
    trace.agents.filter((agent) => byWave.get(agent.agent_id ?? '') === index),
  );
  type Row = { at: Date; kind: 'llm' | 'skill'; html: ReturnType<typeof html> };
  const rows: Row[] = [
    ...trace.llm_calls.map((call) => ({
      at: call.created_at,
      kind: 'llm' as const,
      html: html`<tr class="llm"><td data-label="At">${formatDate(call.created_at)}</td><td data-label="What">LLM ${call.role}</td><td data-label="Detail"><code>${call.model}</code>${call.error ? html` <span class="error">${truncate(call.error, 200)}</span>` : ''}</td><td data-label="Duration">${call.latency_ms} ms</td><td data-label="Prompt">${call.prompt_tokens}</td><td data-label="Cached">${call.cached_tokens}</td><td data-label="Completion">${call.completion_tokens}</td><td data-label="Cost">${formatCost(call.cost)}</td></tr>`,
    })),
    ...[
      ...trace.agents.flatMap((agent) => agent.skill_calls.map((call) => ({ call, agent: agent.agent_id }))),
      ...trace.direct_skill_calls.map((call) => ({ call, agent: null })),
    ].map(({ call, agent }) => ({
      at: new Date(call.started_at ?? 0),
      kind: 'skill' as const,
      html: html`<tr class="skill call-${call.status}" data-execution-id="${call.id}"><td data-label="At">${formatDate(call.started_at ? new Date(call.started_at) : null)}</td><td data-label="What">skill${agent ? ` (${agent})` : ''}</td><td data-label="Detail"><code class="command">${commandText(truncate(call.command, 300))}</code> <span class="badge">${call.status}</span><details><summary>result</summary><pre>${truncate(call.result ?? call.error ?? '', 4000)}</pre></details></td><td data-label="Duration">${call.duration_ms ?? ''} ms</td><td></td><td></td><td></td><td></td></tr>`,
    })),
  ].sort((a, b) => a.at.getTime() - b.at.getTime());
  return html`<section class="card turn-summary" data-turn-id="${turn.id}" data-turn-status="${turn.status}">
      <p><span class="badge" id="turn-status">${turn.status}</span> ${turn.mode} · user ${turn.user_id} · ${formatDate(turn.started_at)}</p>
      <p class="request"><strong>Request:</strong> ${truncate(turn.request, 2000)}</p>
      <p>Tokens: ${trace.usage.prompt_tokens} prompt (${trace.usage.cached_tokens} cached), ${trace.usage.completion_tokens} completion · cost ${formatCost(trace.usage.cost)}</p>
      ${turn.error ? html`<p class="error">${turn.error}</p>` : ''}
    </section>
    <h2>Agents</h2>
    <div class="dag" id="dag" aria-label="Agents in waves">
      ${columns.map((agents, index) => html`<section class="wave" data-wave="${index}" aria-label="Wave ${index + 1}"><h3>Wave ${index + 1}</h3>${agents.map(agentNode)}</section>`)}
      ${trace.agents.length ? '' : html`<p class="empty" id="no-agents">No agents were dispatched in this turn.</p>`}
    </div>
    <h2>Timeline</h2>
    <div class="scroll"><table class="timeline stack">
      <thead><tr><th>At</th><th>What</th><th>Detail</th><th>Duration</th><th>Prompt</th><th>Cached</th><th>Completion</th><th>Cost</th></tr></thead>
      <tbody id="timeline">${rows.map((row) => row.html)}</tbody>
    </table></div>
    <h2>Reply</h2>
    <div class="reply markdown" id="turn-reply">${turn.reply ? markdown(turn.reply) : html`<p class="empty">No reply yet.</p>`}</div>`;
}
