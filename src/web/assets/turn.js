// A turn's trace, live: agents and calls arrive over server-sent events from /turns/:id/events.
(() => {
  const summary = document.querySelector('[data-turn-id]');
  if (!summary) return;
  const turnId = summary.dataset.turnId;
  const dag = document.getElementById('dag');
  const timeline = document.getElementById('timeline');
  const status = document.getElementById('turn-status');
  const terminal = ['completed', 'paused', 'interrupted', 'failed'];
  if (terminal.includes(summary.dataset.turnStatus)) return;

  const el = (tag, className, text) => {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  };
  const waveColumn = (index) => {
    let column = dag.querySelector(`.wave[data-wave="${index}"]`);
    while (!column) {
      const count = dag.querySelectorAll('.wave').length;
      const made = el('section', 'wave');
      made.dataset.wave = String(count);
      made.setAttribute('aria-label', `Wave ${count + 1}`);
      made.appendChild(el('h3', '', `Wave ${count + 1}`));
      dag.appendChild(made);
      document.getElementById('no-agents')?.remove();
      column = dag.querySelector(`.wave[data-wave="${index}"]`);
    }
    return column;
  };
  const agentNode = (agentId) =>
    [...dag.querySelectorAll('.agent')].find((node) => node.dataset.agentId === agentId);
  const waveOf = (dependsOn) => {
    let wave = 0;
    for (const dep of dependsOn) {
      const node = agentNode(dep);
      if (node) wave = Math.max(wave, Number(node.parentElement.dataset.wave) + 1);
    }
    return wave;
  };
  const setStatus = (node, value) => {
    node.dataset.status = value;
    node.className = `agent status-${value}`;
    const badge = node.querySelector('[data-field="status"]');
    if (badge) badge.textContent = value;
  };
  const addAgent = (data) => {
    let node = agentNode(data.agentId);
    if (node) return node;
    node = el('article', 'agent status-pending');
    node.dataset.agentId = data.agentId;
    node.dataset.dependsOn = (data.dependsOn || []).join(' ');
    node.dataset.status = 'pending';
    node.tabIndex = 0;
    const head = el('header');
    head.appendChild(el('strong', '', data.agentId));
    head.appendChild(document.createTextNode(' '));
    const badge = el('span', 'badge', 'pending');
    badge.dataset.field = 'status';
    head.appendChild(badge);
    node.appendChild(head);
    node.appendChild(el('p', 'mission', data.mission || ''));
    if (data.dependsOn?.length) node.appendChild(el('p', 'deps', `after ${data.dependsOn.join(', ')}`));
    const calls = el('ul', 'calls');
    calls.dataset.field = 'calls';
    node.appendChild(calls);
    waveColumn(waveOf(data.dependsOn || [])).appendChild(node);
    return node;
  };
  const LABELS = ['At', 'What', 'Detail', 'Duration', 'Prompt', 'Cached', 'Completion', 'Cost'];
  const row = (cells, className) => {
    const tr = el('tr', className);
    cells.forEach((cell, index) => {
      const td = el('td', '', cell);
      // Labelled like the stored rows (a narrow screen shows each cell on its own line); empty ones stay unlabelled.
      if (cell) td.dataset.label = LABELS[index];
      tr.appendChild(td);
    });
    timeline.appendChild(tr);
  };
  const now = () => new Date().toISOString().replace('T', ' ').slice(0, 19);
  // The page already shows what was stored before it loaded; the stream replays the turn from
  // its start, so skip what is already on the page.
  const seen = new Set(
    [...document.querySelectorAll('[data-execution-id]')].map((node) => node.dataset.executionId),
  );
  let storedLlmCalls = timeline.querySelectorAll('tr.llm').length;

  const source = new EventSource(`/turns/${encodeURIComponent(turnId)}/events`);
  source.addEventListener('agent_dispatched', (event) => addAgent(JSON.parse(event.data)));
  source.addEventListener('agent_start', (event) => {
    const data = JSON.parse(event.data);
    setStatus(addAgent({ agentId: data.agentId, dependsOn: [] }), 'running');
  });
  source.addEventListener('agent_end', (event) => {
    const data = JSON.parse(event.data);
    const node = addAgent({ agentId: data.agentId, dependsOn: [] });
    setStatus(node, data.status);
    if (data.error) node.appendChild(el('p', 'error', data.error));
  });
  source.addEventListener('skill_call_end', (event) => {
    const data = JSON.parse(event.data);
    if (seen.has(data.executionId)) return;
    seen.add(data.executionId);
    if (data.agentId) {
      const node = addAgent({ agentId: data.agentId, dependsOn: [] });
      const item = el('li', `call-${data.status}`);
      item.appendChild(el('code', '', data.command));
      item.appendChild(document.createTextNode(` ${data.status}`));
      node.querySelector('[data-field="calls"]').appendChild(item);
    }
    row(
      [
        now(),
        `skill${data.agentId ? ` (${data.agentId})` : ''}`,
        `${data.command} ${data.status}`,
        `${data.durationMs} ms`,
        '',
        '',
        '',
        '',
      ],
      `skill call-${data.status}`,
    );
  });
  source.addEventListener('llm_call', (event) => {
    if (storedLlmCalls > 0) {
      storedLlmCalls--;
      return;
    }
    const data = JSON.parse(event.data);
    row(
      [
        now(),
        `LLM ${data.role}`,
        data.model,
        `${data.latencyMs} ms`,
        String(data.promptTokens),
        String(data.cachedTokens),
        String(data.completionTokens),
        `$${Number(data.cost).toFixed(4)}`,
      ],
      'llm',
    );
  });
  source.addEventListener('turn_start', () => {
    status.textContent = 'running';
  });
  source.addEventListener('turn_end', (event) => {
    const data = JSON.parse(event.data);
    status.textContent = data.status;
    source.close();
    // The stored trace has everything (results, timings): show it.
    setTimeout(() => window.location.reload(), 300);
  });
})();
